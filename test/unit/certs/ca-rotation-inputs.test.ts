import { describe, expect, it } from 'vitest';
import {
  type InputSubject,
  type RotationFiles,
  checkRotationInputs,
} from '../../../src/certs/ca-rotation-inputs.ts';
import { encodePrivateKey } from '../../../src/pki/index.ts';
import { certManagerMarker, hourMs, makeLeaf, now, pem } from '../validation/material.ts';
import { agentName, controllerName, rotationFixture } from './ca-rotation-fixture.ts';

const fixture = await rotationFixture();
const text = (value: string) => Buffer.from(value);
const file = (flag: string, path: string, bytes: Uint8Array) => ({ flag, path, bytes });

function files(overrides: Partial<RotationFiles> = {}): RotationFiles {
  return {
    ca: file('--ca', 'ca.crt', text(pem(fixture.newCa.certificate))),
    agentCert: file('--agent-cert', 'agent.crt', text(pem(fixture.leaves.agent.certificate))),
    agentKey: file(
      '--agent-key',
      'agent.key',
      text(encodePrivateKey(fixture.leaves.agent.keys.privateKey)),
    ),
    controllerCert: file(
      '--controller-cert',
      'controller.crt',
      text(pem(fixture.leaves.controller.certificate)),
    ),
    controllerKey: file(
      '--controller-key',
      'controller.key',
      text(encodePrivateKey(fixture.leaves.controller.keys.privateKey)),
    ),
    ...overrides,
  };
}

function subject(overrides: Partial<InputSubject> = {}): InputSubject {
  return {
    files: files(),
    overlapMs: hourMs,
    overlap: '1h',
    release: 'haptic',
    namespace: 'haptic',
    peers: { provider: 'external', agentName, controllerName },
    secrets: {
      agent: { name: 'haptic-agent-identity', labels: {}, annotations: {} },
      controller: { name: 'haptic-controller-identity', labels: {}, annotations: {} },
    },
    now,
    ...overrides,
  };
}

function problems(input: InputSubject): readonly string[] {
  const checked = checkRotationInputs(input);
  return checked.ok ? [] : checked.problems;
}

describe('the rotate-ca input checks', () => {
  it("accept the guide's files and give the new fingerprints", () => {
    const checked = checkRotationInputs(subject());
    expect(checked.ok && checked.target.prints).toEqual(fixture.target.prints);
  });

  it('refuse an agent certificate for another name, naming the flag, the file and the required SAN', async () => {
    const wrong = await makeLeaf('agent', 'wrong.example.internal', fixture.newCa);
    const found = problems(
      subject({
        files: files({
          agentCert: file('--agent-cert', 'agent.crt', text(pem(wrong.certificate))),
          agentKey: file('--agent-key', 'agent.key', text(encodePrivateKey(wrong.keys.privateKey))),
        }),
      }),
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^--agent-cert agent\.crt: The agent certificate in Secret haptic\/haptic-agent-identity does not verify against ca\.crt: /,
    );
    expect(found[0]).toContain(`the DNS SAN ${agentName}`);
  });

  it('refuse a key that does not belong to the certificate', () => {
    const found = problems(
      subject({
        files: files({
          controllerKey: file(
            '--controller-key',
            'other.key',
            text(encodePrivateKey(fixture.leaves.oldController.keys.privateKey)),
          ),
        }),
      }),
    );
    expect(found).toEqual([
      expect.stringMatching(
        /^--controller-key other\.key: tls\.key of Secret haptic\/haptic-controller-identity does not belong to the controller certificate/,
      ),
    ]);
  });

  it('refuse swapped roles (the controller certificate has no serverAuth)', () => {
    const found = problems(
      subject({
        files: files({
          agentCert: files().controllerCert,
          agentKey: files().controllerKey,
        }),
      }),
    );
    expect(found[0]).toContain('--controller-cert controller.crt:');
    expect(found[0]).toContain('extendedKeyUsage serverAuth');
  });

  it('refuse a certificate of another CA than --ca', () => {
    const found = problems(
      subject({
        files: files({ ca: file('--ca', 'ca.crt', text(pem(fixture.oldCa.certificate))) }),
      }),
    );
    expect(found).toHaveLength(2);
    expect(found[0]).toContain('does not verify against ca.crt');
  });

  it.each([
    ['48h', 48 * hourMs],
    ['0s', 0],
  ])('refuse --overlap %s', (overlap, overlapMs) => {
    expect(problems(subject({ overlap, overlapMs }))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^--overlap ${overlap}: the trust overlap must be longer than zero and at most 24 hours`,
        ),
      ),
    ]);
  });

  it('refuse a managed release and a Secret of another provider', () => {
    expect(
      problems(subject({ peers: { provider: 'default', agentName, controllerName } }))[0],
    ).toContain('rotate-ca is for external Secrets (managed: false)');
    const found = problems(
      subject({
        secrets: {
          agent: { name: 'haptic-agent-identity', labels: {}, annotations: certManagerMarker },
          controller: { name: 'haptic-controller-identity', labels: {}, annotations: {} },
        },
      }),
    );
    expect(found).toEqual([
      expect.stringContaining("rotate-ca never writes another provider's Secret"),
    ]);
  });

  it('refuse a --ca file that is no certificate', () => {
    expect(
      problems(subject({ files: files({ ca: file('--ca', 'ca.key', text('junk')) }) }))[0],
    ).toMatch(/^--ca ca\.key: not a PEM certificate/);
  });
});
