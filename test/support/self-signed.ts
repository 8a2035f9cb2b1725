import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

export interface SelfSigned {
  /** Directory holding `tls.crt` and `tls.key`. */
  readonly dir: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * A self-signed ECDSA P-256 certificate for DNS name `host`, made with the real openssl,
 * unrelated to any CA of the run. `extensions` are extra `-addext` values.
 */
export async function selfSignedCertificate(
  host: string,
  options: {
    readonly days?: number;
    readonly extensions?: readonly string[];
    readonly parent?: string;
  } = {},
): Promise<SelfSigned> {
  const dir = mkdtempSync(join(options.parent ?? tmpdir(), 'self-signed-'));
  const addext = [`subjectAltName=DNS:${host}`, ...(options.extensions ?? [])].flatMap((e) => [
    '-addext',
    e,
  ]);
  await execa('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    join(dir, 'tls.key'),
    '-out',
    join(dir, 'tls.crt'),
    '-days',
    String(options.days ?? 2),
    '-subj',
    `/CN=${host}`,
    ...addext,
  ]);
  return {
    dir,
    cert: readFileSync(join(dir, 'tls.crt'), 'utf8'),
    key: readFileSync(join(dir, 'tls.key'), 'utf8'),
  };
}
