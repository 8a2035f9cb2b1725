/** `openssl verify` of the identities the renewal wrote, as the two peers would verify each other. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { V1Secret } from '@kubernetes/client-node';
import type { Certificate } from '../../../src/pki/index.ts';
import { type Snapshot, certificates, text } from './renewal-harness.ts';

function pemFile(dir: string, name: string, pems: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, pems.join(''));
  return path;
}

export interface VerifyOptions {
  /** tls.crt: the leaf, then intermediates. */
  readonly chain: readonly Certificate[];
  readonly anchors: readonly Certificate[];
  readonly at: Date;
  readonly purpose: 'sslserver' | 'sslclient';
  readonly hostname: string;
}

/** `openssl verify` of a leaf (intermediates as -untrusted) against anchors, at a given time. */
export async function opensslVerify(
  options: VerifyOptions,
): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-'));
  const [leaf, ...intermediates] = options.chain.map((c) => c.toPem() + '\n');
  if (leaf === undefined || options.anchors.length === 0)
    return { ok: false, output: 'nothing to verify' };
  const args = [
    'verify',
    '-CAfile',
    pemFile(
      dir,
      'anchors.pem',
      options.anchors.map((c) => c.toPem() + '\n'),
    ),
    '-attime',
    String(Math.floor(options.at.getTime() / 1000)),
    '-purpose',
    options.purpose,
    '-verify_hostname',
    options.hostname,
    '-x509_strict',
  ];
  if (intermediates.length > 0)
    args.push('-untrusted', pemFile(dir, 'untrusted.pem', intermediates));
  args.push(pemFile(dir, 'leaf.pem', [leaf]));
  const result = await execa('openssl', args, { reject: false, all: true });
  return { ok: result.exitCode === 0 && /: OK$/m.test(result.all), output: result.all };
}

/** The CAs an identity Secret trusts at `at`: ca.crt, and previous-ca.crt until previous-ca-until. */
export function trustAt(secret: V1Secret | undefined, at: Date): Certificate[] {
  const anchors = [...certificates(secret, 'ca.crt')];
  const until = text(secret, 'previous-ca-until');
  if (until !== undefined && at.getTime() < new Date(until).getTime()) {
    anchors.push(...certificates(secret, 'previous-ca.crt'));
  }
  return anchors;
}

/**
 * Whether controller and agent authenticate each other at `at` with the Secrets as they are:
 * the agent's chain against the controller's trust, and the controller's against the agent's.
 */
export async function peersAuthenticate(
  snapshot: Snapshot,
  at: Date,
): Promise<{ server: string; client: string }> {
  const server = await opensslVerify({
    chain: certificates(snapshot.server, 'tls.crt'),
    anchors: trustAt(snapshot.client, at),
    at,
    purpose: 'sslserver',
    hostname: 'haptic-agent',
  });
  const client = await opensslVerify({
    chain: certificates(snapshot.client, 'tls.crt'),
    anchors: trustAt(snapshot.server, at),
    at,
    purpose: 'sslclient',
    hostname: 'haptic-controller',
  });
  return { server: server.ok ? 'OK' : server.output, client: client.ok ? 'OK' : client.output };
}
