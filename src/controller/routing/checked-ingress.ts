/**
 * validateIngress, once per Ingress view: a view is a read-only value the watch builds when
 * the object changes, and the check is a function of it alone, so an admission review (which
 * checks every Ingress for cross-namespace claims, then builds the model from them all) and
 * every later render reuse the result while the Ingress does not change.
 */
import type { IngressProblem } from '../../validation/ingress-checks.ts';
import type { IngressView } from '../../validation/ingress-view.ts';
import { type ValidIngress, validateIngress } from '../../validation/validate-ingress.ts';

const checked = new WeakMap<IngressView, ValidIngress | IngressProblem>();

export function checkedIngress(view: IngressView): ValidIngress | IngressProblem {
  let result = checked.get(view);
  if (result === undefined) {
    result = validateIngress(view);
    checked.set(view, result);
  }
  return result;
}
