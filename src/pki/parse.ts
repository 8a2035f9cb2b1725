/**
 * PEM bundles of certificates: decoding (leaf first, then intermediates; or a CA bundle) with
 * errors that say which block is wrong, and encoding back to PEM. Everything decoded here is
 * hostile input: sizes are bounded, and every field of a certificate (certificate.ts) is
 * decoded up front by a strict DER reader that accepts only certificates OpenSSL reads
 * (der-certificate.ts), so a certificate that decodes here never throws when they are read.
 */
import { hash } from 'node:crypto';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { Certificate } from './certificate.ts';
import { RecentResults } from './recent-results.ts';

/** Largest PEM input accepted: the size limit of a Kubernetes Secret. */
export const maxPemBytes = 1024 * 1024;

/** Most certificates accepted in one bundle. */
export const maxBundleCertificates = 256;

const labelPattern = /^[A-Z0-9 ]+$/;

interface PemBlock {
  readonly label: string;
  readonly body: string;
  readonly endLabel: string;
  /** Where the text after the block's END line starts. */
  readonly next: number;
}

/** The label of a `-----BEGIN <label>-----` or `-----END <label>-----` marker at `from`. */
function markerLabel(
  text: string,
  from: number,
  keyword: string,
): { label: string; end: number } | undefined {
  const prefix = `-----${keyword} `;
  if (!text.startsWith(prefix, from)) return undefined;
  const end = text.indexOf('-----', from + prefix.length);
  const label = end < 0 ? '' : text.slice(from + prefix.length, end);
  return labelPattern.test(label) ? { label, end: end + 5 } : undefined;
}

/**
 * The PEM block whose BEGIN line starts at `start`, or undefined when it has no matching END
 * line (none, or another marker first). Found with forward searches only, each from where the
 * last stopped, so hostile text costs time in proportion to its length (a pattern match of the
 * whole block backtracked to the end of the text from every BEGIN line without an END).
 */
function pemBlockAt(text: string, start: number): PemBlock | undefined {
  const begin = markerLabel(text, start, 'BEGIN');
  if (begin === undefined) return undefined;
  const endAt = text.indexOf('-----', begin.end);
  if (endAt < 0) return undefined;
  const end = markerLabel(text, endAt, 'END');
  if (end === undefined) return undefined;
  return {
    label: begin.label,
    body: text.slice(begin.end, endAt),
    endLabel: end.label,
    next: end.end,
  };
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(message: string, cause?: unknown): HapticError {
  return new HapticError(
    errorCodes.PKI_CERTIFICATE_INVALID,
    message,
    cause === undefined ? undefined : { cause },
  );
}

function textOf(pem: string | Uint8Array): string {
  return typeof pem === 'string'
    ? pem
    : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength).toString('latin1');
}

/**
 * Certificates decoded recently, by the SHA-256 of their DER. @default 128 (under 2 KB each)
 * Decoding costs tens of microseconds, and the same certificate comes back again and again: a
 * CA in ca.crt of both identity Secrets and of the old and new object of every update, a
 * peer's chain on every request. A decoded certificate is immutable, so one object serves them
 * all, and everything cached by certificate (signatures, key details) is then reused. Kept to the
 * working set of a cluster's few identities and CAs: under a stream of certificates never
 * seen again (a webhook reviewing new Secrets) an entry then dies young. With 256 and more,
 * V8 carried every entry into the old generation (over a megabyte a young collection, each
 * copied twice and freed only by a full collection).
 */
const maxRememberedCertificates = 128;
const recentCertificates = new RecentResults<Certificate>(maxRememberedCertificates);

/** Decodes one DER certificate, every field up front, so later reads cannot throw. */
function decodeDer(der: Uint8Array, position: string): Certificate {
  // One-shot hashing: no Hash object, which is another native handle for the collector.
  const key = hash('sha256', der, 'base64');
  try {
    return recentCertificates.remember(key, () => Certificate.fromDer(der));
  } catch (error) {
    throw invalid(`${position} is not a valid X.509 certificate (${describeError(error)}).`, error);
  }
}

/**
 * Decodes a PEM bundle into certificates in their order (for `tls.crt`: leaf, then
 * intermediates). Text outside PEM blocks is ignored, as openssl does. `what` names the data
 * in messages, for example `tls.crt of Secret haptic/haptic-agent-identity`.
 * Throws `PKI_CERTIFICATE_INVALID` when there is no certificate or any block is not one.
 */
export function decodeCertificateChain(
  pem: string | Uint8Array,
  what = 'The certificate data',
): readonly [Certificate, ...Certificate[]] {
  const size = typeof pem === 'string' ? Buffer.byteLength(pem) : pem.byteLength;
  if (size > maxPemBytes) {
    throw invalid(
      `${what} is ${size} bytes, more than the ${maxPemBytes} bytes a certificate bundle may have.`,
    );
  }
  const text = textOf(pem);
  const inside = `${what.charAt(0).toLowerCase()}${what.slice(1)}`;
  const certificates: Certificate[] = [];
  for (let start = text.indexOf('-----BEGIN'); start >= 0;) {
    const position = `PEM block ${certificates.length + 1} of ${inside}`;
    const block = pemBlockAt(text, start);
    if (block === undefined) {
      throw invalid(`${position} has a BEGIN line without a matching END line.`);
    }
    const { label, body, endLabel } = block;
    start = text.indexOf('-----BEGIN', block.next);
    if (label !== 'CERTIFICATE' || endLabel !== label) {
      const found = label === endLabel ? `"${label}"` : `"${label}" ending as "${endLabel}"`;
      throw invalid(`${position} is a ${found} block; expected only CERTIFICATE blocks.`);
    }
    const base64 = body.replace(/\s+/g, '');
    if (base64.length === 0 || base64.length % 4 !== 0 || !base64Pattern.test(base64)) {
      throw invalid(`${position} is not valid base64.`);
    }
    if (certificates.length === maxBundleCertificates) {
      throw invalid(`${what} has more than ${maxBundleCertificates} certificates.`);
    }
    certificates.push(decodeDer(Buffer.from(base64, 'base64'), position));
  }
  const [first, ...rest] = certificates;
  if (first === undefined) {
    throw invalid(`${what} contains no PEM CERTIFICATE block.`);
  }
  return [first, ...rest];
}

/** Encodes certificates as a PEM bundle in the order given, one block after another. */
export function encodeCertificateChain(certificates: readonly Certificate[]): string {
  return certificates.map((certificate) => `${certificate.toPem()}\n`).join('');
}
