/** Two releases' worth of identities for the rotate-ca unit tests: the old CA and the new one. */
import type { RotationSecret, RotationTarget } from '../../../src/certs/ca-rotation-plan.ts';
import { encodePrivateKey, sha256Fingerprint } from '../../../src/pki/index.ts';
import { b64, identityData, makeCa, makeLeaf, now, pem, secret } from '../validation/material.ts';

const identitySecret = (name: string, data: Record<string, string>): RotationSecret => ({
  ...secret(name, data),
  data,
});

export const agentName = 'agent.example.internal';
export const controllerName = 'controller.example.internal';

export async function rotationFixture() {
  const oldCa = await makeCa('haptic-agent-ca', { at: new Date(now.getTime() - 86_400_000) });
  const newCa = await makeCa('haptic-agent-ca', { at: new Date(now.getTime() - 3_600_000) });
  const leaves = {
    oldAgent: await makeLeaf('agent', agentName, oldCa),
    oldController: await makeLeaf('controller', controllerName, oldCa),
    agent: await makeLeaf('agent', agentName, newCa),
    controller: await makeLeaf('controller', controllerName, newCa),
  };
  const secrets: Record<'agent' | 'controller', RotationSecret> = {
    agent: identitySecret(
      'haptic-agent-identity',
      identityData({ leaf: leaves.oldAgent, trust: [oldCa.certificate] }),
    ),
    controller: identitySecret(
      'haptic-controller-identity',
      identityData({ leaf: leaves.oldController, trust: [oldCa.certificate] }),
    ),
  };
  const pair = (leaf: typeof leaves.agent) => ({
    crt: b64(pem(leaf.certificate)),
    key: b64(encodePrivateKey(leaf.keys.privateKey)),
  });
  const target: RotationTarget = {
    prints: {
      ca: sha256Fingerprint(newCa.certificate),
      agent: sha256Fingerprint(leaves.agent.certificate),
      controller: sha256Fingerprint(leaves.controller.certificate),
    },
    ca: b64(pem(newCa.certificate)),
    identities: { agent: pair(leaves.agent), controller: pair(leaves.controller) },
  };
  return { oldCa, newCa, leaves, secrets, target };
}
