/** Certificates for the agent tests: the spec's openssl commands, and src/pki for odd cases. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import {
  type CertificateAuthority,
  type LeafRole,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../../../src/pki/index.ts';
import { generateStep } from './spec-procedure.ts';

export interface Pair {
  readonly crt: Buffer;
  readonly key: Buffer;
}

export interface SpecMaterial {
  /** Where the commands left their files (ca.crt, agent.crt, agent.key, ...). */
  readonly dir: string;
  readonly ca: Buffer;
  readonly agent: Pair;
  readonly controller: Pair;
}

/** A CA and both identities, made by the spec's own openssl commands. */
export async function specMaterial(
  agentName: string,
  controllerName: string,
): Promise<SpecMaterial> {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-spec-pki-'));
  await execa('bash', ['-c', `set -euo pipefail\n${generateStep}`], {
    env: { rotation_dir: dir, agent_name: agentName, controller_name: controllerName },
    stdin: 'ignore',
  });
  const read = (name: string): Buffer => readFileSync(join(dir, name));
  return {
    dir,
    ca: read('ca.crt'),
    agent: { crt: read('agent.crt'), key: read('agent.key') },
    controller: { crt: read('controller.crt'), key: read('controller.key') },
  };
}

const day = 86_400_000;

export async function authority(
  now = new Date(),
  validityDays = 365,
): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({ commonName: 'haptic-agent-ca', validityDays, now });
  return { certificate, privateKey: keys.privateKey };
}

export function caPem(ca: CertificateAuthority): Buffer {
  return Buffer.from(encodeCertificateChain([ca.certificate]));
}

/** A leaf of `role` (agent: serverAuth, controller: clientAuth) for `dnsName`. */
export async function leaf(
  ca: CertificateAuthority,
  role: LeafRole,
  dnsName: string,
  options: { readonly now?: Date; readonly validityDays?: number } = {},
): Promise<Pair> {
  const issued = await issueLeaf({
    role,
    dnsName,
    issuer: ca,
    validityDays: options.validityDays ?? 30,
    now: options.now ?? new Date(),
  });
  return {
    crt: Buffer.from(encodeCertificateChain([issued.certificate])),
    key: Buffer.from(encodePrivateKey(issued.keys.privateKey)),
  };
}

/** A leaf that expired a day ago (issued 31 days ago for 30 days, under a CA still valid). */
export async function expiredLeaf(
  ca: CertificateAuthority,
  role: LeafRole,
  dnsName: string,
): Promise<Pair> {
  return leaf(ca, role, dnsName, { now: new Date(Date.now() - 31 * day), validityDays: 30 });
}

/** A CA whose validity started 60 days ago, so expired leaves can hang below it. */
export async function oldAuthority(): Promise<CertificateAuthority> {
  return authority(new Date(Date.now() - 60 * day), 365);
}

/** The files of an identity Secret (keys as the kubelet projects them). */
export function identitySecret(
  pair: Pair,
  trust: readonly Buffer[],
  previous?: { readonly ca: Buffer; readonly until: string },
): Record<string, Uint8Array> {
  return {
    'tls.crt': pair.crt,
    'tls.key': pair.key,
    'ca.crt': Buffer.concat([...trust]),
    ...(previous === undefined
      ? {}
      : { 'previous-ca.crt': previous.ca, 'previous-ca-until': Buffer.from(previous.until) }),
  };
}
