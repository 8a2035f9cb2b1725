/**
 * The webhook's HTTPS serving certificate: tls.crt and tls.key of the mounted webhook-tls
 * Secret. Read as one consistent `..data` revision, decoded by the one Secret decoder and
 * validated as a pair before use (and served as re-encoded from the decoded objects), and
 * reloaded when the shared certificate watcher (src/tls) sees the directory change. A new pair
 * that does not validate is not used: the webhook keeps serving the last good one and says so.
 */
import { pino, type Logger } from 'pino';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { encodeCertificateChain, encodePrivateKey, keyMatchesCertificate } from '../pki/index.ts';
import { decodeKeyPair } from '../secrets/key-pair-secret.ts';
import { keyPairSecretKeys } from '../secrets/layout.ts';
import { inDirectory } from '../secrets/secret-fields.ts';
import { TlsMaterialWatcher } from '../tls/material-watcher.ts';
import { readMountedRevision } from '../tls/mounted-revision.ts';

export interface ServingCertificate {
  /** PEM: the leaf, then intermediates. */
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface ServingCertificateSource {
  current(): ServingCertificate;
  /** Calls `listener` with every new valid pair; returns the unsubscribe function. */
  subscribe(listener: (next: ServingCertificate) => void): () => void;
}

function invalid(dir: string, problem: string, cause?: unknown): HapticError {
  return new HapticError(
    errorCodes.WEBHOOK_CERTIFICATE_INVALID,
    `The webhook serving certificate in ${dir} is unusable: ${problem} Mount a Secret with tls.crt and tls.key (--cert-dir).`,
    cause === undefined ? undefined : { cause },
  );
}

/** Reads tls.crt and tls.key of `dir` as one revision and checks them as a pair. */
export async function loadServingCertificate(dir: string): Promise<ServingCertificate> {
  const { certificate, privateKey } = keyPairSecretKeys;
  let files: Readonly<Record<string, Uint8Array>>;
  try {
    files = (await readMountedRevision(dir, [certificate, privateKey])).files;
  } catch (error) {
    throw invalid(dir, describeError(error), error);
  }
  const decoded = decodeKeyPair(
    files,
    inDirectory(dir, { missing: (key) => `${key} is missing.` }),
  );
  if (decoded.state === 'unparsable') throw invalid(dir, decoded.problem.message);
  const { chain, privateKey: key } = decoded.material;
  if (!keyMatchesCertificate(key, chain[0])) {
    throw invalid(dir, `${privateKey} does not belong to the certificate in ${certificate}.`);
  }
  return {
    cert: Buffer.from(encodeCertificateChain(chain)),
    key: Buffer.from(encodePrivateKey(key)),
  };
}

export interface WatchedCertificateSource extends ServingCertificateSource {
  close(): void;
}

export interface WatchOptions {
  readonly dir: string;
  readonly logger: Logger;
  /** Fallback polling interval of the watcher. @default 10 seconds */
  readonly pollIntervalMs?: number;
}

/**
 * Loads the pair (failing fast when it is unusable), then follows the directory with the
 * shared watcher. The watcher judges identity material (it expects ca.crt too); here it only
 * signals changes, so its own log stays silent and this source logs what it serves.
 */
export async function watchServingCertificate(
  options: WatchOptions,
): Promise<WatchedCertificateSource> {
  const { dir, logger } = options;
  let current = await loadServingCertificate(dir);
  const listeners = new Set<(next: ServingCertificate) => void>();
  const watcher = await TlsMaterialWatcher.start({
    dir,
    logger: pino({ level: 'silent' }),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
  });
  const reload = async (): Promise<void> => {
    try {
      const next = await loadServingCertificate(dir);
      if (next.cert.equals(current.cert) && next.key.equals(current.key)) return;
      current = next;
      logger.info({ dir }, 'webhook serving certificate reloaded');
      for (const listener of listeners) listener(next);
    } catch (error) {
      logger.error({ dir }, `${describeError(error)} Still serving the previous certificate.`);
    }
  };
  watcher.onChange(() => {
    void reload();
  });
  return {
    current: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      watcher.close();
      listeners.clear();
    },
  };
}

/** A fixed pair (tests, benchmarks). */
export function fixedCertificateSource(pair: ServingCertificate): ServingCertificateSource {
  return { current: () => pair, subscribe: () => () => undefined };
}
