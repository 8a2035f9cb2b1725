/**
 * Certificates of the routing model: which certificate HAProxy presents for each TLS host
 * (SNI name). A host belongs to the oldest Ingress whose TLS section names it (whether or
 * not its Secret is usable right now, so a rotation gap is no chance to take the host over);
 * newer Ingresses naming it with another certificate lose that host with a warning. A TLS
 * entry without hosts serves the Ingress's own rule hosts, never "whatever names the
 * certificate holds". Secrets HAProxy would not load, or that are missing, leave their hosts
 * on the default certificate, with a warning; the Ingress's routes are served either way.
 */
import { type ClusterSnapshot, objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import type { ModelCertificate } from './model-types.ts';
import { certificatePem } from './tls-secret.ts';
import { tlsHostsOf } from '../../validation/ingress-claims.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';

export interface CertificateResult {
  readonly certificates: readonly ModelCertificate[];
  /** `ssl/default.pem`, or null without a usable default certificate. */
  readonly defaultCertificate: string | null;
  /** Files the certificates refer to, path → content. */
  readonly files: ReadonlyMap<string, string>;
  readonly warnings: readonly ModelWarning[];
}

const defaultCertificateFile = 'ssl/default.pem';

/**
 * Most SNI names one certificate entry (one crt-list line) holds, and the most characters of
 * its names. HAProxy refuses a crt-list line of more than 2047 words ("too many args") or
 * 65,535 characters ("line too long"), and a refused crt-list fails the whole configuration:
 * one Ingress with thousands of TLS hosts, or many Ingresses sharing one Secret, would stop
 * delivery for everyone. The margins leave room for the certificate's path and any settings a
 * template writes on the line.
 */
export const maxHostsPerCertificateLine = 1000;
export const maxHostCharsPerCertificateLine = 60_000;

/**
 * The certificate's sorted hosts as entries of at most maxHostsPerCertificateLine names and
 * maxHostCharsPerCertificateLine characters (spaces included): one crt-list line each, all
 * naming the same file (HAProxy loads a file named on several lines once).
 */
function certificateLines(
  file: string,
  secret: string,
  hosts: readonly string[],
): ModelCertificate[] {
  const lines: ModelCertificate[] = [];
  let line: string[] = [];
  let chars = 0;
  for (const host of hosts) {
    const full = line.length === maxHostsPerCertificateLine;
    if (full || (line.length > 0 && chars + 1 + host.length > maxHostCharsPerCertificateLine)) {
      lines.push({ file, secret, hosts: line });
      line = [];
      chars = 0;
    }
    line.push(host);
    chars += 1 + host.length;
  }
  if (line.length > 0) lines.push({ file, secret, hosts: line });
  return lines;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The file of a Secret's certificate. Namespaces and Secret names never contain `_`, so no
 * two Secrets share a file, and none is `ssl/default.pem`.
 */
function certificateFile(namespace: string, secretName: string): string {
  return `ssl/${namespace}_${secretName}.pem`;
}

type TlsHolders = Map<string, { readonly ingress: string; readonly file: string }>;

/**
 * The hosts of a TLS entry this Ingress keeps: each host goes to the first certificate file
 * that names it (`holders`); a later one naming it with another file loses it, with a warning.
 */
function heldHosts(
  hosts: readonly string[],
  entry: { readonly label: string; readonly file: string; readonly field: string },
  holders: TlsHolders,
  warnings: ModelWarning[],
): string[] {
  const { label, file, field } = entry;
  const kept: string[] = [];
  for (const host of hosts) {
    const holder = holders.get(host);
    if (holder === undefined) holders.set(host, { ingress: label, file });
    if (holder === undefined || holder.file === file) {
      kept.push(host);
      continue;
    }
    const other =
      holder.ingress === label
        ? 'an earlier TLS entry of the same Ingress'
        : `Ingress ${holder.ingress} (created earlier)`;
    warnings.push({
      ingress: label,
      reason: ingressEventReasons.IngressConflict,
      message: `Ingress ${label} names the TLS host ${host} in ${field}, which ${other} already names with another certificate; HAProxy presents that one for ${host}. Remove ${host} from ${field}.hosts, or from ${holder.ingress} first.`,
    });
  }
  return kept;
}

/** The default certificate's file, added to `files`, or null with a warning saying why not. */
function defaultCertificateOf(
  snapshot: ClusterSnapshot,
  options: { readonly defaultCertificate?: string; readonly now: Date },
  files: Map<string, string>,
  warnings: ModelWarning[],
): string | null {
  if (options.defaultCertificate === undefined) return null;
  const secret = snapshot.secrets.get(options.defaultCertificate);
  const pem =
    secret === undefined
      ? undefined
      : certificatePem(secret.data, options.defaultCertificate, options.now);
  if (pem?.ok === true) {
    files.set(defaultCertificateFile, pem.pem);
    return defaultCertificateFile;
  }
  warnings.push({
    reason:
      pem === undefined
        ? ingressEventReasons.TLSSecretMissing
        : ingressEventReasons.TLSSecretInvalid,
    message:
      pem === undefined
        ? `The default certificate Secret ${options.defaultCertificate} does not exist; HTTPS serves only the Ingresses' own certificates.`
        : `The default certificate is not used: ${pem.message}`,
  });
  return null;
}

/** `ingresses` oldest first (see olderFirst). */
export function buildCertificates(
  ingresses: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  options: { readonly defaultCertificate?: string; readonly now: Date },
): CertificateResult {
  const warnings: ModelWarning[] = [];
  const files = new Map<string, string>();
  const holders: TlsHolders = new Map();
  const hostsOf = new Map<string, { readonly secret: string; readonly hosts: Set<string> }>();
  for (const ingress of ingresses) {
    if (ingress.tls.length === 0) continue;
    const label = objectKey(ingress.namespace, ingress.name);
    for (const entry of ingress.tls) {
      const secret = objectKey(ingress.namespace, entry.secretName);
      const file = certificateFile(ingress.namespace, entry.secretName);
      const hosts = tlsHostsOf(ingress, entry.hosts);
      if (hosts.length === 0) {
        warnings.push({
          ingress: label,
          reason: ingressEventReasons.TLSHostsMissing,
          message: `Ingress ${label} has ${entry.field} without hosts and no rule with a host, so the certificate of Secret ${secret} is not used; list its hosts in ${entry.field}.hosts.`,
        });
        continue;
      }
      const kept = heldHosts(hosts, { label, file, field: entry.field }, holders, warnings);
      if (kept.length === 0) continue;
      const data = snapshot.secrets.get(secret)?.data;
      if (data === undefined) {
        warnings.push({
          ingress: label,
          reason: ingressEventReasons.TLSSecretMissing,
          message: `Ingress ${label} names the TLS Secret ${secret}, which does not exist; its hosts get the default certificate until it does.`,
        });
        continue;
      }
      const pem = certificatePem(data, secret, options.now);
      if (!pem.ok) {
        warnings.push({
          ingress: label,
          reason: ingressEventReasons.TLSSecretInvalid,
          message: `Ingress ${label} is served with the default certificate for ${kept.join(', ')}: ${pem.message}`,
        });
        continue;
      }
      files.set(file, pem.pem);
      const known = hostsOf.get(file) ?? { secret, hosts: new Set<string>() };
      for (const host of kept) known.hosts.add(host);
      hostsOf.set(file, known);
    }
  }

  const defaultCertificate = defaultCertificateOf(snapshot, options, files, warnings);

  const certificates = [...hostsOf.entries()]
    .sort(([a], [b]) => compare(a, b))
    .flatMap(([file, { secret, hosts }]) =>
      certificateLines(file, secret, [...hosts].sort(compare)),
    );
  return { certificates, defaultCertificate, files, warnings };
}
