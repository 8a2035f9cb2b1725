/**
 * The controllers' delivery and reconcile counters, as the rotation tests judge them from
 * scrapes of every controller (prometheus-text.ts).
 */
import type { LocalSite } from './local-site.ts';
import { type Sample, scrapeMetrics, total } from './prometheus-text.ts';

/** Deliveries that changed an agent's configuration. */
export const applied = (samples: readonly Sample[]): number =>
  total(samples, 'haptic_deliveries_total', (labels) => labels.result === 'applied');

/** Failed reconciles (`<stage>_failed`). */
export const failedReconciles = (samples: readonly Sample[]): number =>
  total(
    samples,
    'haptic_reconciles_total',
    (labels) => labels.result?.endsWith('_failed') ?? false,
  );

/** Failed deliveries by `<agent> <reason>`, summed over the controllers. */
function failedCounts(samples: readonly Sample[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { name, labels, value } of samples) {
    if (
      name !== 'haptic_deliveries_total' ||
      ['applied', 'unchanged'].includes(labels.result ?? '')
    )
      continue;
    const key = `${labels.agent ?? ''} ${labels.result ?? ''}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** Failed deliveries between two readings, as `<agent> <reason> <count>`; empty when none. */
export function failedDeliveries(before: readonly Sample[], after: readonly Sample[]): string[] {
  const earlier = failedCounts(before);
  return [...failedCounts(after)].flatMap(([key, count]) => {
    const delta = count - (earlier.get(key) ?? 0);
    return delta === 0 ? [] : [`${key} ${String(delta)}`];
  });
}

/** Every controller's metrics, scraped at once (only the leader delivers; both review). */
export async function controllerSamples(site: LocalSite): Promise<Sample[]> {
  return (await Promise.all(site.controllers.map((c) => scrapeMetrics(c.address)))).flat();
}
