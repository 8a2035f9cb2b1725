/**
 * `haptic certificates status`, the decision: one row per Pod of both Deployments, from what
 * the Pod reported (the HAProxyTemplateConfig's `status.tls` entries) and what its Secrets
 * hold now. Pure: fingerprints, entries and `now` in; rows with their problems out. A row is
 * converged when the Pod reported, its report is valid, it trusts exactly the Secret's CAs
 * (and the previous CAs the Secret still grants), it presents the Secret's certificate, and
 * that certificate outlives the window.
 */
import type { TlsReport } from '../agent-api/tls-report.ts';
import type { TlsPeerRole, TlsStateEntryParse } from '../api/tls-state-entry.ts';
import type { ExpectedTrust } from './expected-trust.ts';

export interface StatusInput {
  readonly pods: readonly { readonly name: string; readonly role: TlsPeerRole }[];
  readonly expected: Readonly<Record<TlsPeerRole, ExpectedTrust>>;
  /** The issuer Secret's current CA (default provider); undefined when there is none. */
  readonly issuerCa: string | undefined;
  /** Entries by Pod name, as parsed. */
  readonly entries: ReadonlyMap<string, TlsStateEntryParse>;
  readonly now: Date;
  readonly withinMs: number;
}

export interface StatusRow {
  readonly pod: string;
  readonly role: TlsPeerRole;
  /** Fingerprints of the loaded ca.crt; empty when unknown. */
  readonly loadedCas: readonly string[];
  /** Loaded CAs equal the mounted Secret's ca.crt. */
  readonly matchesSecret: boolean;
  /** The issuer's CA is among the loaded ones; null without an issuer Secret. */
  readonly matchesIssuer: boolean | null;
  readonly previousCas: readonly string[];
  /** Time left to the previous-CA deadline, in ms; null without previous trust. */
  readonly previousCaLeftMs: number | null;
  readonly leafNotAfter: string | null;
  readonly leafSerial: string | null;
  readonly revision: string | null;
  readonly lastExchange: string | null;
  readonly converged: boolean;
  /** Why the row is not converged, one sentence each. */
  readonly problems: readonly string[];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((item) => right.has(item));
}

function reportProblems(
  report: TlsReport,
  expected: ExpectedTrust,
  issuerCa: string | undefined,
  input: StatusInput,
): string[] {
  const problems: string[] = [];
  if (!report.valid)
    problems.push(`its loaded material is unusable (${report.reason ?? 'unknown reason'})`);
  if (!sameSet(report.caFingerprints, expected.cas))
    problems.push(`it has not loaded ca.crt of Secret ${expected.secret} yet`);
  if (issuerCa !== undefined && !report.caFingerprints.includes(issuerCa))
    problems.push("it does not trust the issuer Secret's current CA yet");
  if (!sameSet(report.previousCaFingerprints, expected.previousCas))
    problems.push(
      expected.previousCas.length === 0
        ? `it still trusts a previous CA that Secret ${expected.secret} no longer grants`
        : `it has not loaded previous-ca.crt of Secret ${expected.secret} yet`,
    );
  if (report.leaf === null) {
    problems.push('it has no certificate loaded');
    return problems;
  }
  if (expected.leafSerial !== undefined && report.leaf.serial !== expected.leafSerial)
    problems.push(`it has not loaded tls.crt of Secret ${expected.secret} yet`);
  const left = Date.parse(report.leaf.notAfter) - input.now.getTime();
  if (left <= input.withinMs) problems.push(`its certificate expires at ${report.leaf.notAfter}`);
  return problems;
}

function rowOf(pod: StatusInput['pods'][number], input: StatusInput): StatusRow {
  const expected = input.expected[pod.role];
  const parsed = input.entries.get(pod.name);
  const empty = {
    pod: pod.name,
    role: pod.role,
    loadedCas: [],
    matchesSecret: false,
    matchesIssuer: input.issuerCa === undefined ? null : false,
    previousCas: [],
    previousCaLeftMs: null,
    leafNotAfter: null,
    leafSerial: null,
    revision: null,
    lastExchange: null,
    converged: false,
  };
  if (parsed === undefined) {
    const who = pod.role === 'agent' ? 'the leader has not recorded it' : 'it has not recorded it';
    return { ...empty, problems: [`no TLS state reported (${who})`] };
  }
  if (!parsed.ok)
    return { ...empty, problems: [`its recorded TLS state is malformed: ${parsed.message}`] };
  const { entry } = parsed;
  const report = entry.loaded;
  const problems = [
    ...(entry.role === pod.role ? [] : [`its entry says role ${entry.role}`]),
    ...(entry.error === null ? [] : [entry.error]),
    ...(report === null
      ? ['no TLS state reported']
      : reportProblems(report, expected, input.issuerCa, input)),
  ];
  const until = report?.previousCaUntil ?? null;
  return {
    ...empty,
    loadedCas: report?.caFingerprints ?? [],
    matchesSecret: report !== null && sameSet(report.caFingerprints, expected.cas),
    matchesIssuer:
      input.issuerCa === undefined
        ? null
        : (report?.caFingerprints.includes(input.issuerCa) ?? false),
    previousCas: report?.previousCaFingerprints ?? [],
    previousCaLeftMs: until === null ? null : Date.parse(until) - input.now.getTime(),
    leafNotAfter: report?.leaf?.notAfter ?? null,
    leafSerial: report?.leaf?.serial ?? null,
    revision: report?.revision ?? null,
    lastExchange: entry.lastExchange,
    converged: problems.length === 0,
    problems,
  };
}

/** One row per Pod, controllers first, each sorted by name. */
export function statusRows(input: StatusInput): StatusRow[] {
  const order = (role: TlsPeerRole): number => (role === 'controller' ? 0 : 1);
  return [...input.pods]
    .sort(
      (a, b) => order(a.role) - order(b.role) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    )
    .map((pod) => rowOf(pod, input));
}
