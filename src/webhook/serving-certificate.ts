/**
 * The webhook's HTTPS serving certificate: tls.crt and tls.key of the mounted webhook-tls
 * Secret. Read as one consistent `..data` revision, decoded by the one Secret decoder and
 * validated as a pair before use (and served as re-encoded from the decoded objects), and
 * reloaded when the shared certificate watcher (src/tls) sees the directory change. A new pair
 * that does not validate is not used: the webhook keeps serving the last good one and says so.
 *
 * Optionally with the CAs that callers' client certificates must chain to (ca.crt of another
 * mounted Secret, controller.webhook.clientAuth): then the listener asks every caller for a
 * certificate and completes no handshake without one they signed. It travels with the pair so
 * the listener swaps both in one secure context.
 */
import { pino, type Logger } from 'pino';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import {
  decodeCertificateChain,
  encodeCertificateChain,
  encodePrivateKey,
  keyMatchesCertificate,
} from '../pki/index.ts';
import { decodeKeyPair } from '../secrets/key-pair-secret.ts';
import { keyPairSecretKeys } from '../secrets/layout.ts';
import { inDirectory } from '../secrets/secret-fields.ts';
import { TlsMaterialWatcher } from '../tls/material-watcher.ts';
import { readMountedRevision } from '../tls/mounted-revision.ts';

export interface ServingCertificate {
  /** PEM: the leaf, then intermediates. */
  readonly cert: Buffer;
  readonly key: Buffer;
  /** PEM CA certificates a caller's client certificate must chain to; absent: none asked for. */
  readonly clientCa?: Buffer;
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

/** The file of the client-CA directory: ca.crt, as in every CA-bearing Secret. */
const clientCaFile = 'ca.crt';

/**
 * Reads ca.crt of `dir`: one or more CA certificates (basicConstraints cA), served re-encoded.
 * A leaf is refused: trusting it would accept only itself, which is never what was meant.
 */
export async function loadClientCa(dir: string): Promise<Buffer> {
  const unusable = (problem: string, cause?: unknown): HapticError =>
    new HapticError(
      errorCodes.WEBHOOK_CERTIFICATE_INVALID,
      `The webhook's client CA in ${dir} is unusable: ${problem} Mount a Secret whose ${clientCaFile} holds the CA that signs the API server's webhook client certificate (controller.webhook.clientAuth.caSecretName).`,
      cause === undefined ? undefined : { cause },
    );
  let bytes: Uint8Array | undefined;
  try {
    bytes = (await readMountedRevision(dir, [clientCaFile])).files[clientCaFile];
  } catch (error) {
    throw unusable(describeError(error), error);
  }
  if (bytes === undefined) throw unusable(`${clientCaFile} is missing.`);
  let certificates;
  try {
    certificates = decodeCertificateChain(bytes, clientCaFile);
  } catch (error) {
    throw unusable(describeError(error), error);
  }
  const leaf = certificates.findIndex((certificate) => !certificate.ca);
  if (leaf >= 0) {
    throw unusable(
      `certificate ${leaf + 1} of ${clientCaFile} is not a CA (basicConstraints cA is not set).`,
    );
  }
  return Buffer.from(encodeCertificateChain(certificates));
}

export interface WatchedCertificateSource extends ServingCertificateSource {
  close(): void;
}

export interface WatchOptions {
  readonly dir: string;
  /** Directory of the client CA (ca.crt); absent: callers are not asked for a certificate. */
  readonly clientCaDir?: string;
  readonly logger: Logger;
  /** Fallback polling interval of the watcher. @default 10 seconds */
  readonly pollIntervalMs?: number;
}

/**
 * Loads the pair and the client CA, if any (failing fast when unusable), then follows both
 * directories with the shared watcher. The watcher judges identity material (it expects ca.crt
 * too); here it only signals changes, so its own log stays silent and this source logs what it
 * serves. A client CA that stops decoding keeps the previous one, as a pair does.
 */
export async function watchServingCertificate(
  options: WatchOptions,
): Promise<WatchedCertificateSource> {
  const { dir, clientCaDir, logger } = options;
  const load = async (): Promise<ServingCertificate> => {
    const pair = await loadServingCertificate(dir);
    return clientCaDir === undefined
      ? pair
      : { ...pair, clientCa: await loadClientCa(clientCaDir) };
  };
  let current = await load();
  const listeners = new Set<(next: ServingCertificate) => void>();
  const watchers = await Promise.all(
    [dir, ...(clientCaDir === undefined ? [] : [clientCaDir])].map((watched) =>
      TlsMaterialWatcher.start({
        dir: watched,
        logger: pino({ level: 'silent' }),
        ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
      }),
    ),
  );
  const reload = async (): Promise<void> => {
    try {
      const next = await load();
      if (sameMaterial(next, current)) return;
      current = next;
      logger.info({ dir, clientCaDir }, 'webhook serving certificate reloaded');
      for (const listener of listeners) listener(next);
    } catch (error) {
      logger.error(
        { dir, clientCaDir },
        `${describeError(error)} Still serving the previous certificate.`,
      );
    }
  };
  for (const watcher of watchers) {
    watcher.onChange(() => {
      void reload();
    });
  }
  return {
    current: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      for (const watcher of watchers) watcher.close();
      listeners.clear();
    },
  };
}

function sameMaterial(a: ServingCertificate, b: ServingCertificate): boolean {
  const sameCa =
    a.clientCa === undefined || b.clientCa === undefined
      ? a.clientCa === b.clientCa
      : a.clientCa.equals(b.clientCa);
  return a.cert.equals(b.cert) && a.key.equals(b.key) && sameCa;
}

/** A fixed pair (tests, benchmarks). */
export function fixedCertificateSource(pair: ServingCertificate): ServingCertificateSource {
  return { current: () => pair, subscribe: () => () => undefined };
}
