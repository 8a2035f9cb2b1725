/**
 * agent-certificates.txt, "Supply external identities" and "Rotate a certificate authority",
 * run as the spec prints them (spec-procedure.ts) against the real API server with the
 * webhook registered for the identity Secrets: every write of the guide is admitted, while
 * the same CA change split into two plain writes (add the CA beside the old one, then drop the
 * old one) is denied. Secrets are projected into a directory per side, so the spec's own
 * wait_projected runs unchanged; the identify step, which reads names from the Deployments,
 * is replaced by its result.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type SecretProjector, projectSecret } from '../../../dev/lib/secret-projector.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { adminKubeConfig, createTestNamespace, kubectl } from '../../support/cluster.ts';
import {
  createSecretsStep,
  distributeTrustStep,
  generateStep,
  inNamespace,
  replaceIdentitiesStep,
  revokeStep,
  waitForIdentitiesStep,
  waitForTrustStep,
  waitProjectedFunction,
} from '../agent/spec-procedure.ts';
import { type SpecMaterial, specMaterial } from '../agent/test-pki.ts';
import { b64, makeCa, pem } from '../../unit/validation/material.ts';
import { type RegisteredWebhook, registerWebhook } from './registered-webhook.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-webhook-rotation-'));
const dirs = { loadbalancer: join(root, 'agent'), controller: join(root, 'controller') };
const projectors: SecretProjector[] = [];
let namespace = '';
let hook: RegisteredWebhook | undefined;
let material: SpecMaterial;

/** The variables the spec's identify step sets, for the spec's names. */
const identified = {
  server_secret: 'haptic-agent-identity',
  client_secret: 'haptic-controller-identity',
  agent_name: 'agent.example.internal',
  controller_name: 'controller.example.internal',
};

async function runSpec(
  steps: readonly string[],
  env: Record<string, string>,
): Promise<{ exitCode: number; stderr: string }> {
  const script = [
    'set -euo pipefail',
    waitProjectedFunction,
    ...steps.map((step) => inNamespace(step, namespace)),
  ].join('\n');
  const result = await execa('bash', ['-c', script], {
    cwd: material.dir,
    env: {
      ...identified,
      ...env,
      KUBECONFIG: inject('kubeconfig'),
      PATH: `${join(projectRoot, '.tools/bin')}:${process.env.PATH ?? ''}`,
      TLS_DIRS_loadbalancer: dirs.loadbalancer,
      TLS_DIRS_controller: dirs.controller,
    },
    stdin: 'ignore',
    reject: false,
  });
  return { exitCode: result.exitCode ?? -1, stderr: result.stderr };
}

function denial(stderr: string): string {
  const marker = 'denied the request: ';
  return stderr.includes(marker)
    ? stderr.slice(stderr.indexOf(marker) + marker.length).trim()
    : `not denied: ${stderr}`;
}

async function caOf(secret: string): Promise<string> {
  const got = await kubectl([
    'get',
    'secret',
    secret,
    '-n',
    namespace,
    '-o',
    'jsonpath={.data.ca\\.crt}',
  ]);
  return Buffer.from(got.stdout, 'base64').toString();
}

beforeAll(async () => {
  namespace = await createTestNamespace('webhook-rotation');
  hook = await registerWebhook(namespace, {
    namespace,
    provider: 'external',
    serverSecret: identified.server_secret,
    clientSecret: identified.client_secret,
    serverName: identified.agent_name,
    clientName: identified.controller_name,
  });
  material = await specMaterial(identified.agent_name, identified.controller_name);
  const created = await runSpec([createSecretsStep], {});
  expect(created.exitCode, created.stderr).toBe(0);
  const kc = adminKubeConfig();
  projectors.push(
    await projectSecret(kc, namespace, identified.server_secret, [{ dir: dirs.loadbalancer }]),
    await projectSecret(kc, namespace, identified.client_secret, [{ dir: dirs.controller }]),
  );
  await Promise.all(projectors.map((projector) => projector.settled()));
});

afterAll(async () => {
  await Promise.all(projectors.map((projector) => projector.stop()));
  await hook?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('CA changes through the webhook', () => {
  it('denies replacing the CA in two plain writes, at each write', async () => {
    const attacker = await makeCa('haptic-agent-ca', { at: new Date() });
    const secret = identified.server_secret;
    const patch = (trust: string) =>
      kubectl([
        'patch',
        'secret',
        secret,
        '-n',
        namespace,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { 'ca.crt': b64(trust) } }),
      ]);
    const beside = await patch(material.ca.toString() + pem(attacker.certificate));
    expect(beside.exitCode).not.toBe(0);
    expect(denial(beside.stderr)).toMatch(
      new RegExp(
        `^ca\\.crt of Secret ${namespace}/${secret} adds the CA CN=haptic-agent-ca, which is neither a CA the Secret trusts now \\(CN=haptic-agent-ca\\) nor a renewal of one`,
      ),
    );
    const alone = await patch(pem(attacker.certificate));
    expect(alone.exitCode).not.toBe(0);
    expect(denial(alone.stderr)).toContain('a new CA enters only by a rotation');
    expect(await caOf(secret)).toBe(material.ca.toString());
  });

  it("admits every write of the guide's rotation, and ends trusting only the new CA", async () => {
    const rotationDir = mkdtempSync(join(root, 'rotation-'));
    const env = { rotation_dir: rotationDir };
    const steps = [
      generateStep,
      distributeTrustStep,
      waitForTrustStep,
      replaceIdentitiesStep,
      waitForIdentitiesStep,
      revokeStep,
    ];
    const result = await runSpec(steps, env);
    expect(result.stderr).not.toContain('denied');
    expect(result.exitCode, result.stderr).toBe(0);
    const newCa = readFileSync(join(rotationDir, 'ca.crt'), 'utf8');
    expect(newCa).not.toBe(material.ca.toString());
    for (const secret of [identified.server_secret, identified.client_secret]) {
      expect(await caOf(secret)).toBe(newCa);
    }
  });
});
