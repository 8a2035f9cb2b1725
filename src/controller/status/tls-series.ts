/**
 * The TLS metrics of each Pod: sets the series a report implies and removes the ones it no
 * longer does (a CA replaced, a previous CA revoked, a Pod gone), so no stale series stays.
 */
import type { TlsReport } from '../../agent-api/tls-report.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import type { TlsPeerRole } from '../../api/tls-state-entry.ts';

interface PodLabels {
  readonly role: TlsPeerRole;
  readonly pod: string;
}

interface CaLabels extends PodLabels {
  readonly fingerprint: string;
  readonly kind: 'current' | 'previous';
}

interface PodSeries {
  readonly labels: PodLabels;
  readonly cas: readonly CaLabels[];
}

function seconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

export class TlsSeries {
  readonly #metrics: ControllerMetrics;
  readonly #pods = new Map<string, PodSeries>();

  constructor(metrics: ControllerMetrics) {
    this.#metrics = metrics;
  }

  /** Sets the series of one Pod from its report; none for a Pod without a report. */
  set(role: TlsPeerRole, pod: string, report: TlsReport | null): void {
    this.remove(pod);
    if (report === null) return;
    const labels = { role, pod };
    const cas: CaLabels[] = [
      ...report.caFingerprints.map((fingerprint) => ({
        ...labels,
        fingerprint,
        kind: 'current' as const,
      })),
      ...report.previousCaFingerprints.map((fingerprint) => ({
        ...labels,
        fingerprint,
        kind: 'previous' as const,
      })),
    ];
    for (const ca of cas) this.#metrics.tlsTrustedCa.set(ca, 1);
    if (report.leaf !== null)
      this.#metrics.tlsCertificateNotAfter.set(labels, seconds(report.leaf.notAfter));
    if (report.previousCaUntil !== null)
      this.#metrics.tlsPreviousCaUntil.set(labels, seconds(report.previousCaUntil));
    this.#pods.set(pod, { labels, cas });
  }

  /** Removes every series of one Pod. */
  remove(pod: string): void {
    const series = this.#pods.get(pod);
    if (series === undefined) return;
    for (const ca of series.cas) this.#metrics.tlsTrustedCa.remove(ca);
    this.#metrics.tlsCertificateNotAfter.remove(series.labels);
    this.#metrics.tlsPreviousCaUntil.remove(series.labels);
    this.#pods.delete(pod);
  }
}
