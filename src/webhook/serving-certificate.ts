/**
 * The webhook's HTTPS serving certificate: tls.crt and tls.key from a directory (the mounted
 * webhook-tls Secret), validated as a pair before use. The source interface lets the shared
 * certificate watcher (src/tls) swap the pair when the kubelet projects a new one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { decodeCertificateChain, decodePrivateKey, keyMatchesCertificate } from '../pki/index.ts';

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

/** Reads and checks the pair in `dir` (through `..data` as the kubelet projects it). */
export function loadServingCertificate(dir: string): ServingCertificate {
  let cert: Buffer;
  let key: Buffer;
  try {
    cert = readFileSync(join(dir, 'tls.crt'));
    key = readFileSync(join(dir, 'tls.key'));
  } catch (error) {
    throw invalid(dir, `${describeError(error)}.`, error);
  }
  try {
    const [leaf] = decodeCertificateChain(cert, `tls.crt in ${dir}`);
    if (!keyMatchesCertificate(decodePrivateKey(key).privateKey, leaf)) {
      throw invalid(dir, 'tls.key does not belong to the certificate in tls.crt.');
    }
  } catch (error) {
    if (error instanceof HapticError && error.code === errorCodes.WEBHOOK_CERTIFICATE_INVALID) {
      throw error;
    }
    throw invalid(dir, describeError(error), error);
  }
  return { cert, key };
}

/**
 * The pair read once at start. Until the shared certificate watcher exists (src/tls), a new
 * webhook certificate takes effect when the process restarts.
 */
export function directoryCertificateSource(dir: string): ServingCertificateSource {
  const pair = loadServingCertificate(dir);
  return {
    current: () => pair,
    subscribe: () => () => undefined,
  };
}

/** A fixed pair (tests, benchmarks). */
export function fixedCertificateSource(pair: ServingCertificate): ServingCertificateSource {
  return { current: () => pair, subscribe: () => () => undefined };
}
