import { describe, expect, it } from 'vitest';
import {
  b64,
  identityData,
  makeCa,
  makeLeaf,
  now,
  hourMs,
} from '../../test/unit/validation/material.ts';
import { decodeIdentitySecret } from '../secrets/identity-secret.ts';
import { checkIdentity } from './identity-rules.ts';

const ca = await makeCa();
const otherCa = await makeCa('other-ca');
const agent = await makeLeaf('agent', 'haptic-agent', ca);
const controller = await makeLeaf('controller', 'haptic-controller', ca);
const agentAsController = await makeLeaf('controller', 'haptic-agent', ca);
const wrongName = await makeLeaf('agent', 'agent.example.internal', ca);
const expired = await makeLeaf('agent', 'haptic-agent', ca, {
  at: new Date(now.getTime() - 40 * 24 * hourMs),
});

function verdict(role: 'server' | 'client', data: Record<string, string>, at = now): string {
  const found = checkIdentity({
    name: 'id',
    label: 'haptic/id',
    role,
    peerName: role === 'server' ? 'haptic-agent' : 'haptic-controller',
    state: decodeIdentitySecret(data, 'Secret haptic/id'),
    now: at,
  });
  return found === undefined ? 'ok' : `${found.code} ${found.path}: ${found.message}`;
}

describe('identity material', () => {
  it('accepts an agent identity with serverAuth, its DNS SAN and a chain to ca.crt', () => {
    expect(verdict('server', identityData({ leaf: agent, trust: [ca.certificate] }))).toBe('ok');
  });

  it('accepts a controller identity with clientAuth and its DNS SAN', () => {
    expect(verdict('client', identityData({ leaf: controller, trust: [ca.certificate] }))).toBe(
      'ok',
    );
  });

  it('rejects undecodable data, naming the key', () => {
    const data = { ...identityData({ leaf: agent, trust: [ca.certificate] }), 'tls.key': b64('x') };
    expect(verdict('server', data)).toMatch(
      /^SecretUnparsable secret\/id\/tls\.key: tls\.key of Secret haptic\/id is unusable\. .* The agent identity needs tls\.crt \(leaf, then intermediates\), tls\.key and ca\.crt, all PEM\.$/,
    );
  });

  it('rejects a key that does not match the certificate', () => {
    const data = identityData({ leaf: agent, key: controller.keys, trust: [ca.certificate] });
    expect(verdict('server', data)).toBe(
      'KeyMismatch secret/id/tls.key: tls.key of Secret haptic/id does not belong to the agent certificate in tls.crt: update tls.crt and tls.key together, from the same issuance.',
    );
  });

  it('rejects an agent certificate without serverAuth', () => {
    const data = identityData({ leaf: agentAsController, trust: [ca.certificate] });
    expect(verdict('server', data)).toBe(
      'IdentityWrongPurpose secret/id/tls.crt: The agent certificate in Secret haptic/id does not verify against ca.crt: The certificate CN=haptic-agent lacks the serverAuth extended key usage; reissue it with serverAuth.',
    );
  });

  it('rejects a certificate without the configured DNS SAN', () => {
    const data = identityData({ leaf: wrongName, trust: [ca.certificate] });
    expect(verdict('server', data)).toBe(
      'IdentityNameMismatch secret/id/tls.crt: The agent certificate in Secret haptic/id does not verify against ca.crt: The certificate CN=agent.example.internal has DNS names agent.example.internal, not haptic-agent; reissue it with the DNS SAN haptic-agent.',
    );
  });

  it('rejects a certificate that does not chain to ca.crt', () => {
    const data = identityData({ leaf: agent, trust: [otherCa.certificate] });
    expect(verdict('server', data)).toMatch(
      /^IdentityUntrusted secret\/id\/tls\.crt: The agent certificate in Secret haptic\/id does not verify against ca\.crt: The certificate CN=haptic-agent \(issuer CN=haptic-agent-ca\) is not signed by a trusted CA/,
    );
  });

  it('rejects an expired certificate', () => {
    const data = identityData({ leaf: expired, trust: [ca.certificate] });
    expect(verdict('server', data)).toMatch(
      /^IdentityExpired secret\/id\/tls\.crt: .* expired at /,
    );
  });

  it('accepts a chain to previous-ca.crt while its deadline is ahead', () => {
    const data = identityData({
      leaf: agent,
      trust: [otherCa.certificate],
      previous: [ca.certificate],
      until: '2030-03-01T13:00:00Z',
    });
    expect(verdict('server', data)).toBe('ok');
  });

  it('rejects a chain to previous-ca.crt once its deadline passed', () => {
    const data = identityData({
      leaf: agent,
      trust: [otherCa.certificate],
      previous: [ca.certificate],
      until: '2030-03-01T11:00:00Z',
    });
    expect(verdict('server', data)).toMatch(
      /^IdentityUntrusted .* does not verify against ca\.crt: /,
    );
  });
});
