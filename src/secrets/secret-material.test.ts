import { describe, expect, it } from 'vitest';
import {
  backdateMs,
  crossSignCa,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../pki/index.ts';
import { decideRenewal } from '../certs/renewal-policy.ts';
import {
  decodeIdentitySecret,
  decodeIdentityTrustSecret,
  encodeIdentitySecret,
} from './identity-secret.ts';
import { decodeIssuerSecret, encodeIssuerSecret } from './issuer-secret.ts';
import { decodeKeyPair, decodeServedKeyPair } from './key-pair-secret.ts';
import type { SecretData } from './layout.ts';
import type { IdentityMaterial, IssuerMaterial } from './material.ts';

const now = new Date('2030-03-01T12:00:00Z');
const until = new Date('2030-03-01T13:00:00Z');
const issuerSecret = 'Secret haptic/haptic-agent-issuer';
const serverSecret = 'Secret haptic/haptic-agent-identity';

const previous = await issueCa({
  commonName: 'haptic-agent-ca',
  validityDays: 365,
  now: new Date('2029-04-01T00:00:00Z'),
});
const ca = await issueCa({ commonName: 'haptic-agent-ca', validityDays: 365, now });
const authority = { certificate: ca.certificate, privateKey: ca.keys.privateKey };
const crossSigned = await crossSignCa({
  certificate: ca.certificate,
  issuer: { certificate: previous.certificate, privateKey: previous.keys.privateKey },
  notBefore: new Date(now.getTime() - backdateMs),
  notAfter: until,
});
const server = await issueLeaf({
  role: 'agent',
  dnsName: 'agent.example.internal',
  issuer: authority,
  validityDays: 365,
  now,
});
const client = await issueLeaf({
  role: 'controller',
  dnsName: 'controller.example.internal',
  issuer: authority,
  validityDays: 365,
  now,
});

const issuer: IssuerMaterial = {
  certificate: ca.certificate,
  privateKey: ca.keys.privateKey,
  generation: 2,
  rotation: { previousCa: previous.certificate, crossSignedCa: crossSigned, until },
};
const serverIdentity: IdentityMaterial = {
  chain: [server.certificate, crossSigned],
  privateKey: server.keys.privateKey,
  trust: [ca.certificate],
  previousTrust: { certificates: [previous.certificate], until },
};
const clientIdentity: IdentityMaterial = {
  ...serverIdentity,
  chain: [client.certificate, crossSigned],
  privateKey: client.keys.privateKey,
};

const text = (value: string): string => Buffer.from(value).toString('base64');
const issuerData = encodeIssuerSecret(issuer);
const serverData = encodeIdentitySecret(serverIdentity);

describe('encodeIssuerSecret and decodeIssuerSecret', () => {
  it('round-trip the CA, its key, the generation and the rotation state', () => {
    expect(Object.keys(issuerData).sort()).toEqual([
      'cross-signed-ca.crt',
      'generation',
      'previous-ca-until',
      'previous-ca.crt',
      'tls.crt',
      'tls.key',
    ]);
    const decoded = decodeIssuerSecret(issuerData, issuerSecret);
    expect(decoded).toMatchObject({
      state: 'present',
      material: { generation: 2, rotation: { until } },
    });
  });

  it('reads a Secret that does not exist as absent', () => {
    expect(decodeIssuerSecret(undefined, issuerSecret)).toEqual({ state: 'absent' });
  });
});

describe('encodeIdentitySecret and decodeIdentitySecret', () => {
  it('round-trip into material the policy finds up to date', () => {
    expect(Object.keys(serverData).sort()).toEqual([
      'ca.crt',
      'previous-ca-until',
      'previous-ca.crt',
      'tls.crt',
      'tls.key',
    ]);
    const decoded = {
      issuer: decodeIssuerSecret(issuerData, issuerSecret),
      server: decodeIdentitySecret(serverData, serverSecret),
      client: decodeIdentitySecret(
        encodeIdentitySecret(clientIdentity),
        'Secret haptic/haptic-controller-identity',
      ),
    };
    const decision = decideRenewal(
      {
        issuer: decoded.issuer,
        identities: { server: decoded.server, client: decoded.client },
        names: { server: 'agent.example.internal', client: 'controller.example.internal' },
        secretNames: { issuer: 'haptic/i', server: 'haptic/s', client: 'haptic/c' },
      },
      new Date(now.getTime() + 60_000),
    );
    expect(decision).toMatchObject({ action: 'none', generation: 2, nextRenewal: until });
  });

  it('reads decoded bytes, as files of a projected volume give them', () => {
    const bytes = Object.fromEntries(
      Object.entries(serverData).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    );
    expect(decodeIdentitySecret(bytes, serverSecret).state).toBe('present');
  });

  it('reads an identity without previous trust', () => {
    const plain = { ...serverData, 'previous-ca.crt': undefined, 'previous-ca-until': undefined };
    const decoded = decodeIdentitySecret(plain, serverSecret);
    expect(decoded.state === 'present' && decoded.material.previousTrust).toBe(undefined);
  });
});

const keyPem = encodePrivateKey(server.keys.privateKey);
const leafPem = encodeCertificateChain([server.certificate]);

const hostileIdentities: readonly (readonly [string, SecretData, RegExp])[] = [
  ['an empty Secret', {}, /^Secret haptic\/haptic-agent-identity has no tls\.crt\.$/],
  ['an empty tls.crt', { ...serverData, 'tls.crt': '' }, /has no tls\.crt/],
  [
    'tls.crt that is not base64',
    { ...serverData, 'tls.crt': '!!!!' },
    /^tls\.crt of Secret haptic\/haptic-agent-identity is not valid base64\.$/,
  ],
  [
    'a private key in tls.crt',
    { ...serverData, 'tls.crt': text(keyPem) },
    /PEM block 1 of tls\.crt of Secret .* "PRIVATE KEY" block/,
  ],
  [
    'random bytes in tls.crt',
    { ...serverData, 'tls.crt': new Uint8Array([0, 255, 1, 2]) },
    /tls\.crt of Secret .* contains no PEM CERTIFICATE block/,
  ],
  ['no tls.key', { ...serverData, 'tls.key': undefined }, /has no tls\.key/],
  [
    'a certificate in tls.key',
    { ...serverData, 'tls.key': text(leafPem) },
    /^tls\.key of Secret haptic\/haptic-agent-identity is unusable\./,
  ],
  ['no ca.crt', { ...serverData, 'ca.crt': undefined }, /has no ca\.crt/],
  [
    'previous-ca.crt without its deadline',
    { ...serverData, 'previous-ca-until': undefined },
    /has previous-ca\.crt without previous-ca-until\./,
  ],
  [
    'a deadline with an offset',
    { ...serverData, 'previous-ca-until': text('2030-03-01T13:00:00+01:00') },
    /previous-ca-until of .* is not an RFC 3339 UTC timestamp/,
  ],
  [
    'a value that is neither text nor bytes',
    JSON.parse('{"tls.crt": 42}') as SecretData,
    /is neither text nor bytes/,
  ],
];

describe('decodeIdentitySecret turns hostile data into an unparsable state', () => {
  it.each(hostileIdentities)('for %s', (_name, data, problem) => {
    const decoded = decodeIdentitySecret(data, serverSecret);
    expect(decoded.state).toBe('unparsable');
    expect(decoded.state === 'unparsable' ? decoded.problem.message : '').toMatch(problem);
  });
});

describe('decodeIdentityTrustSecret reads only the trust fields', () => {
  it('decodes ca.crt and the rotation overlap whatever tls.crt and tls.key hold', () => {
    const broken = { ...serverData, 'tls.crt': text('nonsense'), 'tls.key': undefined };
    const decoded = decodeIdentityTrustSecret(broken, serverSecret);
    expect(decoded.state).toBe('present');
    if (decoded.state !== 'present') return;
    expect(decoded.material.trust.map((certificate) => certificate.subject)).toEqual([
      'CN=haptic-agent-ca',
    ]);
    expect(decoded.material.previousTrust?.until).toEqual(until);
    expect(Object.keys(decoded.material).sort()).toEqual(['previousTrust', 'trust']);
  });

  it('is absent for no data, and unparsable, naming the key, for a hostile trust field', () => {
    expect(decodeIdentityTrustSecret(undefined, serverSecret)).toEqual({ state: 'absent' });
    for (const [data, key] of [
      [{ ...serverData, 'ca.crt': text('nonsense') }, 'ca.crt'],
      [{ ...serverData, 'ca.crt': undefined }, 'ca.crt'],
      [
        { ...serverData, 'previous-ca.crt': text('-----BEGIN CERTIFICATE-----') },
        'previous-ca.crt',
      ],
      [{ ...serverData, 'previous-ca-until': text('tomorrow') }, 'previous-ca-until'],
    ] as const) {
      const decoded = decodeIdentityTrustSecret(data, serverSecret);
      expect(decoded.state).toBe('unparsable');
      expect(decoded.state === 'unparsable' ? decoded.problem.key : '').toBe(key);
    }
  });
});

const hostileIssuers: readonly (readonly [string, SecretData, RegExp])[] = [
  [
    'generation 0',
    { ...issuerData, generation: text('0') },
    /generation of Secret .* must be a positive whole number, not "0"\./,
  ],
  ['a negative generation', { ...issuerData, generation: text('-1') }, /positive whole number/],
  ['a fractional generation', { ...issuerData, generation: text('1.5') }, /positive whole number/],
  ['a generation in words', { ...issuerData, generation: text('two') }, /positive whole number/],
  ['no generation', { ...issuerData, generation: undefined }, /has no generation/],
  [
    'two certificates in tls.crt',
    { ...issuerData, 'tls.crt': text(leafPem + leafPem) },
    /tls\.crt of Secret .* must hold exactly one certificate/,
  ],
  [
    'an unusable key',
    { ...issuerData, 'tls.key': text('nonsense') },
    /tls\.key of Secret .* is unusable/,
  ],
  [
    'a rotation without its cross-signed CA',
    { ...issuerData, 'cross-signed-ca.crt': undefined },
    /has previous-ca\.crt and previous-ca-until without cross-signed-ca\.crt\./,
  ],
];

describe('decodeIssuerSecret turns hostile data into an unparsable state', () => {
  it.each(hostileIssuers)('for %s', (_name, data, problem) => {
    const decoded = decodeIssuerSecret(data, issuerSecret);
    expect(decoded.state).toBe('unparsable');
    expect(decoded.state === 'unparsable' ? decoded.problem.message : '').toMatch(problem);
  });

  it('reads a generation surrounded by white space', () => {
    const decoded = decodeIssuerSecret({ ...issuerData, generation: text(' 7\n') }, issuerSecret);
    expect(decoded.state === 'present' && decoded.material.generation).toBe(7);
  });
});

describe('every decoding problem names its key and reason, so no caller reads the sentence', () => {
  it.each([
    ['an empty Secret', {}, 'tls.crt', 'KeyMissing'],
    ['tls.crt that is not base64', { ...serverData, 'tls.crt': '!!!!' }, 'tls.crt', 'NotBase64'],
    [
      'a certificate in tls.key',
      { ...serverData, 'tls.key': text(leafPem) },
      'tls.key',
      'PrivateKeyInvalid',
    ],
    ['no ca.crt', { ...serverData, 'ca.crt': undefined }, 'ca.crt', 'KeyMissing'],
    [
      'a private key in ca.crt',
      { ...serverData, 'ca.crt': text(keyPem) },
      'ca.crt',
      'CertificateInvalid',
    ],
    [
      'previous-ca-until without previous-ca.crt',
      { ...serverData, 'previous-ca.crt': undefined },
      'previous-ca-until',
      'KeysIncomplete',
    ],
    [
      'an unparsable deadline',
      { ...serverData, 'previous-ca-until': text('tomorrow') },
      'previous-ca-until',
      'ValueInvalid',
    ],
  ] as const)('for an identity with %s', (_name, data, key, reason) => {
    const decoded = decodeIdentitySecret(data, serverSecret);
    expect(decoded.state === 'unparsable' ? decoded.problem : undefined).toMatchObject({
      key,
      reason,
    });
  });

  it('for an issuer whose rotation lacks its cross-signed CA', () => {
    const decoded = decodeIssuerSecret(
      { ...issuerData, 'cross-signed-ca.crt': undefined },
      issuerSecret,
    );
    expect(decoded.state === 'unparsable' ? decoded.problem : undefined).toMatchObject({
      key: 'previous-ca.crt',
      reason: 'KeysIncomplete',
    });
  });

  it('for a key pair whose tls.key is missing', () => {
    const decoded = decodeKeyPair({ 'tls.crt': serverData['tls.crt'] }, 'Secret haptic/webhook');
    expect(decoded).toEqual({
      state: 'unparsable',
      problem: {
        key: 'tls.key',
        reason: 'KeyMissing',
        message: 'Secret haptic/webhook has no tls.key.',
      },
    });
  });

  it('for a value above the limit the caller sets, before decoding it', () => {
    const decoded = decodeServedKeyPair(serverData, 'Secret app/tls', { maxBytes: 100 });
    expect(decoded.state === 'unparsable' ? decoded.problem : undefined).toMatchObject({
      key: 'tls.crt',
      reason: 'TooLarge',
    });
  });

  it('reads base64 that editors wrapped, with white space between its lines', () => {
    const wrapped = (serverData['tls.crt'] ?? '').replace(/(.{76})/g, '$1\n');
    expect(decodeIdentitySecret({ ...serverData, 'tls.crt': wrapped }, serverSecret).state).toBe(
      'present',
    );
  });
});
