/**
 * What a peer has loaded for the mTLS link, as a {@link TlsReport}: the agent answers it in
 * `GET /v1/state`, the controller records it for itself. Pure: a snapshot and `now` in.
 */
import { type Certificate, sha256Fingerprint } from '../pki/index.ts';
import type { TlsReport, TlsReportLeaf } from '../agent-api/tls-report.ts';
import type { TlsMaterialSnapshot } from './material-watcher.ts';
import { materialStatusAt } from './tls-material.ts';

/** The serial number in lower-case hex without leading zero bytes. */
export function certificateSerial(certificate: Certificate): string {
  return certificate.serialNumber.replace(/^(00)+(?=.)/, '');
}

function leafOf(certificate: Certificate): TlsReportLeaf {
  return {
    serial: certificateSerial(certificate),
    dnsNames: [...certificate.dnsNames],
    notAfter: certificate.notAfter.toISOString(),
  };
}

/** The report of one snapshot at `now`. */
export function loadedTlsReport(snapshot: TlsMaterialSnapshot, now: Date): TlsReport {
  const status = materialStatusAt(snapshot.decoding, now, snapshot.dir);
  const material = snapshot.decoding.ok ? snapshot.decoding.material : undefined;
  const previousUntil = status.ok ? status.trust.previousUntil : undefined;
  return {
    revision: snapshot.revision ?? null,
    valid: status.ok,
    reason: status.ok ? null : status.reason,
    caFingerprints: (material?.trust ?? []).map(sha256Fingerprint),
    previousCaFingerprints:
      previousUntil === undefined
        ? []
        : (material?.previousTrust?.certificates ?? []).map(sha256Fingerprint),
    previousCaUntil: previousUntil?.toISOString() ?? null,
    leaf: material === undefined ? null : leafOf(material.chain[0]),
    loadedAt: snapshot.loadedAt.toISOString(),
  };
}
