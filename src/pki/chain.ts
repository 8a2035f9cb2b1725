/**
 * Chain verification: is this leaf (with the intermediates sent after it) trusted by one of
 * these anchors at `now`, for this purpose and this DNS name? Synchronous and cached per
 * certificate, because the agent re-checks its peer on every request.
 */
import type { Problem } from '../problem.ts';
import type { Certificate } from './certificate.ts';
import { isSignedBy } from './signature-check.ts';

/** Extended key usages the product checks, by name. */
export type Purpose = 'serverAuth' | 'clientAuth';

/** OID of each purpose. */
const purposeOids = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const satisfies Record<Purpose, string>;

/** True when a dNSName pattern (exact, or `*.` + parent for exactly one leftmost label) covers `name`. */
function dnsNameMatches(pattern: string, name: string): boolean {
  const normalize = (value: string): string => value.toLowerCase().replace(/\.$/, '');
  const wanted = normalize(name);
  const given = normalize(pattern);
  if (!given.startsWith('*.')) return given === wanted;
  const dot = wanted.indexOf('.');
  return dot > 0 && wanted.slice(dot) === given.slice(1) && given.split('.').length > 2;
}

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
      readonly path: readonly Certificate[];
    }
  | ({ readonly ok: false } & Problem<ChainFailureReason>);

export interface VerifyChainOptions {
  /** The presented chain: leaf first, then any intermediates (for example a cross-signed CA). */
  readonly chain: readonly Certificate[];
  /** Trusted CA certificates. */
  readonly anchors: readonly Certificate[];
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

function validityFailure(role: string, certificate: Certificate, now: number): Failure | undefined {
  if (now > certificate.notAfter.getTime()) {
    return fail(
      chainFailureReasons.Expired,
      `The ${role} ${certificate.subject} expired at ${certificate.notAfter.toISOString()}; renew it.`,
    );
  }
  if (now < certificate.notBefore.getTime()) {
    return fail(
      chainFailureReasons.NotYetValid,
      `The ${role} ${certificate.subject} is not valid before ${certificate.notBefore.toISOString()}; check the clocks of issuer and peer.`,
    );
  }
  return undefined;
}

function leafFailure(
  certificate: Certificate,
  options: VerifyChainOptions,
  now: number,
): Failure | undefined {
  const validity = validityFailure('certificate', certificate, now);
  if (validity !== undefined) return validity;
  if (certificate.keyUsage !== undefined && (certificate.keyUsage & digitalSignature) === 0) {
    return fail(
      chainFailureReasons.WrongPurpose,
      `The certificate ${certificate.subject} lacks the digitalSignature key usage a TLS peer needs; reissue it.`,
    );
  }
  const { purpose, dnsName } = options;
  if (
    purpose !== undefined &&
    certificate.extendedKeyUsages?.includes(purposeOids[purpose]) !== true
  ) {
    return fail(
      chainFailureReasons.WrongPurpose,
      `The certificate ${certificate.subject} lacks the ${purpose} extended key usage; reissue it with ${purpose}.`,
    );
  }
  if (
    dnsName !== undefined &&
    !certificate.dnsNames.some((pattern) => dnsNameMatches(pattern, dnsName))
  ) {
    const written = certificate.dnsNames.map((name) => name.toLowerCase());
    const names = written.length === 0 ? 'no DNS names' : `DNS names ${written.join(', ')}`;
    return fail(
      chainFailureReasons.NameMismatch,
      `The certificate ${certificate.subject} has ${names}, not ${dnsName}; reissue it with the DNS SAN ${dnsName}.`,
    );
  }
  return undefined;
}

/** Why `issuer` may not sign the path below it, or nothing. `below` counts non-self-issued CAs under it. */
function issuerFailure(
  role: string,
  certificate: Certificate,
  below: number,
  now: number,
): Failure | undefined {
  const validity = validityFailure(role, certificate, now);
  if (validity !== undefined) return validity;
  if (
    !certificate.ca ||
    (certificate.keyUsage !== undefined && (certificate.keyUsage & keyCertSign) === 0)
  ) {
    return fail(
      chainFailureReasons.NotCa,
      `The ${role} ${certificate.subject} is not a CA allowed to sign certificates (basicConstraints CA:TRUE, keyCertSign).`,
    );
  }
  if (certificate.pathLength !== undefined && below > certificate.pathLength) {
    return fail(
      chainFailureReasons.PathTooLong,
      `The ${role} ${certificate.subject} allows ${certificate.pathLength} intermediate CAs below it, the chain has ${below}.`,
    );
  }
  return undefined;
}

interface Search {
  readonly anchors: readonly Certificate[];
  readonly intermediates: readonly Certificate[];
  readonly now: number;
  /** The first specific failure met on any branch, reported when no branch succeeds. */
  firstFailure: Failure | undefined;
  /** Paths still to be tried (maxPathsTried at the start). */
  pathsLeft: number;
}

function candidatesFor(current: Certificate, pool: readonly Certificate[]): Certificate[] {
  return pool.filter(
    (candidate) => candidate.subject === current.issuer && isSignedBy(current, candidate),
  );
}

/** Depth-first search from the end of `path` to an anchor. */
function extend(
  search: Search,
  path: readonly Certificate[],
  below: number,
): readonly Certificate[] | undefined {
  const current = path[path.length - 1];
  if (current === undefined || path.length >= maxPathLength || search.pathsLeft <= 0) {
    return undefined;
  }
  search.pathsLeft -= 1;
  for (const anchor of candidatesFor(current, search.anchors)) {
    const failure = issuerFailure('trusted CA', anchor, below, search.now);
    if (failure === undefined) return [...path, anchor];
    search.firstFailure ??= failure;
  }
  const unused = search.intermediates.filter((certificate) => !path.includes(certificate));
  for (const intermediate of candidatesFor(current, unused)) {
    const failure = issuerFailure('intermediate CA', intermediate, below, search.now);
    if (failure !== undefined) {
      search.firstFailure ??= failure;
      continue;
    }
    const selfIssued = intermediate.subject === intermediate.issuer;
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
  const failure = leafFailure(leaf, options, now);
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
      `The certificate ${leaf.subject} (issuer ${leaf.issuer}) is not signed by a trusted CA: ` +
        `issue it from a trusted CA (ca.crt), or, when ${leaf.issuer} is an intermediate CA of a trusted one, send that intermediate after the certificate in tls.crt.`,
    )
  );
}
