/**
 * The controllers' delivery and reconcile counters, as the rotation tests judge them from
 * scrapes of every controller (prometheus-text.ts).
 */
import { type Sample, total } from './prometheus-text.ts';

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

/** Failed deliveries between two readings, as `<agent> <reason> <count>`; empty when none. */
export function failedDeliveries(before: readonly Sample[], after: readonly Sample[]): string[] {
  const failed = (sample: Sample) =>
    sample.name === 'haptic_deliveries_total' &&
    !['applied', 'unchanged'].includes(sample.labels.result ?? '');
  const series = new Set(
    after.filter(failed).map((s) => `${s.labels.agent ?? ''} ${s.labels.result ?? ''}`),
  );
  return [...series].flatMap((key) => {
    const [agent, result] = key.split(' ');
    const count = (samples: readonly Sample[]) =>
      total(samples, 'haptic_deliveries_total', (l) => l.agent === agent && l.result === result);
    const delta = count(after) - count(before);
    return delta === 0 ? [] : [`${key} ${String(delta)}`];
  });
}
