/**
 * Chain verification: is this leaf (with the intermediates sent after it) trusted by one of
 * these anchors at `now`, for this purpose and this DNS name? Synchronous and cached per
 * certificate object, because the agent re-checks its peer on every request.
 */
import {
  type CertificateFacts,
  type Purpose,
  certificateFacts,
  dnsNameMatches,
  isSignedBy,
  purposeOids,
} from './certificate-facts.ts';
import type { x509 } from './x509.ts';

export type { Purpose } from './certificate-facts.ts';

/** Why a chain does not verify. */
export const chainFailureReasons = {
  /** No certificate was presented. */
  Empty: 'Empty',
  /** A certificate on the path (leaf, intermediate or anchor) is past its notAfter. */
  Expired: 'Expired',
  /** A certificate on the path is before its notBefore. */
  NotYetValid: 'NotYetValid',
  /** The leaf lacks the extended key usage asked for, or may not sign TLS handshakes. */
  WrongPurpose: 'WrongPurpose',
  /** No dNSName of the leaf's subjectAltName matches the DNS name asked for. */
  NameMismatch: 'NameMismatch',
  /** No trusted anchor signed the leaf, directly or through the intermediates. */
  UnknownAuthority: 'UnknownAuthority',
  /** A certificate that signed another is not a CA allowed to sign certificates. */
  NotCa: 'NotCa',
  /** A CA's pathLenConstraint forbids the intermediates below it. */
  PathTooLong: 'PathTooLong',
} as const;

export type ChainFailureReason = (typeof chainFailureReasons)[keyof typeof chainFailureReasons];

export type ChainVerification =
  | {
      readonly ok: true;
      /** Leaf first, the trusted anchor last. */
      readonly path: readonly x509.X509Certificate[];
    }
  | { readonly ok: false; readonly reason: ChainFailureReason; readonly message: string };

export interface VerifyChainOptions {
  /** The presented chain: leaf first, then any intermediates (for example a cross-signed CA). */
  readonly chain: readonly x509.X509Certificate[];
  /** Trusted CA certificates. */
  readonly anchors: readonly x509.X509Certificate[];
  readonly now: Date;
  /** Extended key usage the leaf must carry. @default no check */
  readonly purpose?: Purpose;
  /** DNS name a dNSName SAN of the leaf must match. @default no check */
  readonly dnsName?: string;
}

type Failure = Extract<ChainVerification, { ok: false }>;

/** Longest path followed: leaf, intermediates, anchor. */
const maxPathLength = 8;
/**
 * Paths the search may try before it gives up. Presented certificates that all sign each
 * other (self-issued CAs sharing one key and subject) make the paths through them grow as the
 * orderings of the chain: seven such CAs cost tens of milliseconds of blocked event loop per
 * handshake or review. A real chain needs a path per cross-signed alternative, a few at most.
 */
const maxPathsTried = 64;
const keyCertSign = 32;
const digitalSignature = 1;

function fail(reason: ChainFailureReason, message: string): Failure {
  return { ok: false, reason, message };
}

function validityFailure(role: string, facts: CertificateFacts, now: number): Failure | undefined {
  if (now > facts.notAfter) {
    return fail(
      chainFailureReasons.Expired,
      `The ${role} ${facts.subject} expired at ${new Date(facts.notAfter).toISOString()}; renew it.`,
    );
  }
  if (now < facts.notBefore) {
    return fail(
      chainFailureReasons.NotYetValid,
      `The ${role} ${facts.subject} is not valid before ${new Date(facts.notBefore).toISOString()}; check the clocks of issuer and peer.`,
    );
  }
  return undefined;
}

function leafFailure(
  facts: CertificateFacts,
  options: VerifyChainOptions,
  now: number,
): Failure | undefined {
  const validity = validityFailure('certificate', facts, now);
  if (validity !== undefined) return validity;
  if (facts.keyUsage !== undefined && (facts.keyUsage & digitalSignature) === 0) {
    return fail(
      chainFailureReasons.WrongPurpose,
      `The certificate ${facts.subject} lacks the digitalSignature key usage a TLS peer needs; reissue it.`,
    );
  }
  const { purpose, dnsName } = options;
  if (purpose !== undefined && facts.extendedKeyUsages?.includes(purposeOids[purpose]) !== true) {
    return fail(
      chainFailureReasons.WrongPurpose,
      `The certificate ${facts.subject} lacks the ${purpose} extended key usage; reissue it with ${purpose}.`,
    );
  }
  if (
    dnsName !== undefined &&
    !facts.dnsNames.some((pattern) => dnsNameMatches(pattern, dnsName))
  ) {
    const names =
      facts.dnsNames.length === 0 ? 'no DNS names' : `DNS names ${facts.dnsNames.join(', ')}`;
    return fail(
      chainFailureReasons.NameMismatch,
      `The certificate ${facts.subject} has ${names}, not ${dnsName}; reissue it with the DNS SAN ${dnsName}.`,
    );
  }
  return undefined;
}

/** Why `issuer` may not sign the path below it, or nothing. `below` counts non-self-issued CAs under it. */
function issuerFailure(
  role: string,
  facts: CertificateFacts,
  below: number,
  now: number,
): Failure | undefined {
  const validity = validityFailure(role, facts, now);
  if (validity !== undefined) return validity;
  if (!facts.ca || (facts.keyUsage !== undefined && (facts.keyUsage & keyCertSign) === 0)) {
    return fail(
      chainFailureReasons.NotCa,
      `The ${role} ${facts.subject} is not a CA allowed to sign certificates (basicConstraints CA:TRUE, keyCertSign).`,
    );
  }
  if (facts.pathLength !== undefined && below > facts.pathLength) {
    return fail(
      chainFailureReasons.PathTooLong,
      `The ${role} ${facts.subject} allows ${facts.pathLength} intermediate CAs below it, the chain has ${below}.`,
    );
  }
  return undefined;
}

interface Search {
  readonly anchors: readonly x509.X509Certificate[];
  readonly intermediates: readonly x509.X509Certificate[];
  readonly now: number;
  /** The first specific failure met on any branch, reported when no branch succeeds. */
  firstFailure: Failure | undefined;
  /** Paths still to be tried (maxPathsTried at the start). */
  pathsLeft: number;
}

function candidatesFor(
  current: x509.X509Certificate,
  pool: readonly x509.X509Certificate[],
): x509.X509Certificate[] {
  const issuerName = certificateFacts(current).issuer;
  return pool.filter(
    (candidate) =>
      certificateFacts(candidate).subject === issuerName && isSignedBy(current, candidate),
  );
}

/** Depth-first search from the end of `path` to an anchor. */
function extend(
  search: Search,
  path: readonly x509.X509Certificate[],
  below: number,
): readonly x509.X509Certificate[] | undefined {
  const current = path[path.length - 1];
  if (current === undefined || path.length >= maxPathLength || search.pathsLeft <= 0) {
    return undefined;
  }
  search.pathsLeft -= 1;
  for (const anchor of candidatesFor(current, search.anchors)) {
    const failure = issuerFailure('trusted CA', certificateFacts(anchor), below, search.now);
    if (failure === undefined) return [...path, anchor];
    search.firstFailure ??= failure;
  }
  const unused = search.intermediates.filter((certificate) => !path.includes(certificate));
  for (const intermediate of candidatesFor(current, unused)) {
    const facts = certificateFacts(intermediate);
    const failure = issuerFailure('intermediate CA', facts, below, search.now);
    if (failure !== undefined) {
      search.firstFailure ??= failure;
      continue;
    }
    const selfIssued = facts.subject === facts.issuer;
    const found = extend(search, [...path, intermediate], below + (selfIssued ? 0 : 1));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Verifies `chain` against `anchors` at `now`: the leaf's validity, key usage, purpose and DNS
 * name, then a path of valid signatures through the presented intermediates to an anchor, every
 * certificate on it valid at `now` and every issuer a CA. An extended key usage, when asked
 * for, must be listed explicitly: a leaf without the extension authorises nothing.
 */
export function verifyChain(options: VerifyChainOptions): ChainVerification {
  const [leaf, ...intermediates] = options.chain;
  if (leaf === undefined) return fail(chainFailureReasons.Empty, 'No certificate was presented.');
  const now = options.now.getTime();
  const leafFacts = certificateFacts(leaf);
  const failure = leafFailure(leafFacts, options, now);
  if (failure !== undefined) return failure;
  const search: Search = {
    anchors: options.anchors,
    intermediates,
    now,
    firstFailure: undefined,
    pathsLeft: maxPathsTried,
  };
  const path = extend(search, [leaf], 0);
  if (path !== undefined) return { ok: true, path };
  return (
    search.firstFailure ??
    fail(
      chainFailureReasons.UnknownAuthority,
      `The certificate ${leafFacts.subject} (issuer ${leafFacts.issuer}) is not signed by a trusted CA: ` +
        `issue it from a trusted CA (ca.crt), or, when ${leafFacts.issuer} is an intermediate CA of a trusted one, send that intermediate after the certificate in tls.crt.`,
    )
  );
}
