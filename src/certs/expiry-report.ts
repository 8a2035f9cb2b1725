/**
 * `haptic certificates check`, the judging half: the expiry of each identity's certificate
 * (the leaf of tls.crt) and of each CA in its ca.crt, against a window. Only public material
 * is looked at; private keys are never decoded. Pure: `now` comes in, decoding problems are
 * entries, never exceptions.
 */
import type { Certificate } from '../pki/index.ts';
import { decodeSecretCertificates } from '../secrets/key-pair-secret.ts';
import { identitySecretKeys } from '../secrets/layout.ts';
import { inSecret } from '../secrets/secret-fields.ts';
import { formatDuration } from './duration-text.ts';

/** The Secret keys the check reads: the identity certificate and its trust. */
export const checkedKeys = [identitySecretKeys.certificate, identitySecretKeys.trust] as const;

export type ExpiryStatus = 'ok' | 'expiring' | 'expired' | 'unreadable';

export interface ExpiryEntry {
  /** Secret name (or `deployment/<name>` when its Secret could not be found). */
  readonly source: string;
  /** Secret key; `ca.crt[2]` for the second CA of a bundle. */
  readonly key: string;
  readonly status: ExpiryStatus;
  readonly subject?: string;
  readonly notAfter?: Date;
  /** Why the entry is unreadable. */
  readonly problem?: string;
}

export interface ExpiryWindow {
  readonly now: Date;
  /** An expiry sooner than this from `now` fails the check. */
  readonly withinMs: number;
}

/** An entry for something that could not be read. */
export function unreadable(source: string, key: string, problem: string): ExpiryEntry {
  return { source, key, status: 'unreadable', problem };
}

function judged(
  source: string,
  key: string,
  certificate: Certificate,
  window: ExpiryWindow,
): ExpiryEntry {
  const notAfter = certificate.notAfter;
  const left = notAfter.getTime() - window.now.getTime();
  const status: ExpiryStatus = left <= 0 ? 'expired' : left < window.withinMs ? 'expiring' : 'ok';
  return { source, key, status, subject: certificate.subject, notAfter };
}

/**
 * Entries for one Secret's data as the API returns it (base64 values; `undefined` when the
 * Secret is missing): the leaf of tls.crt, then every CA of ca.crt.
 */
export function secretExpiry(
  secret: string,
  data: Readonly<Record<string, string | undefined>> | undefined,
  window: ExpiryWindow,
): ExpiryEntry[] {
  if (data === undefined) {
    return checkedKeys.map((key) => unreadable(secret, key, `Secret ${secret} does not exist`));
  }
  const place = inSecret(secret, { missing: (key) => `Secret ${secret} has no ${key}` });
  return checkedKeys.flatMap((key) => {
    const decoded = decodeSecretCertificates(data, key, place);
    if (decoded.state === 'unparsable') return [unreadable(secret, key, decoded.problem.message)];
    const certificates = decoded.material;
    if (key === identitySecretKeys.certificate)
      return [judged(secret, key, certificates[0], window)];
    return certificates.map((certificate, index) =>
      judged(secret, index === 0 ? key : `${key}[${index + 1}]`, certificate, window),
    );
  });
}

/** True when no entry expires within the window or is unreadable. */
export function allValid(entries: readonly ExpiryEntry[]): boolean {
  return entries.length > 0 && entries.every((entry) => entry.status === 'ok');
}

/**
 * One line per entry, status last:
 * `haptic-agent-server-tls tls.crt: CN=haptic-agent expires 2027-03-01T12:00:00Z, in 365d 0h: ok`.
 */
export function formatEntry(entry: ExpiryEntry, window: ExpiryWindow, within: string): string {
  const head = `${entry.source} ${entry.key}:`;
  if (entry.notAfter === undefined) {
    return `${head} unreadable: ${entry.problem ?? 'no certificate'}`;
  }
  const at = `${entry.notAfter.toISOString().slice(0, 19)}Z`;
  const left = entry.notAfter.getTime() - window.now.getTime();
  const subject = entry.subject ?? '(no subject)';
  if (entry.status === 'expired') {
    return `${head} ${subject} expired ${at}, ${formatDuration(left)} ago: expired`;
  }
  const verdict = entry.status === 'expiring' ? `expires within ${within}` : 'ok';
  return `${head} ${subject} expires ${at}, in ${formatDuration(left)}: ${verdict}`;
}
