/**
 * Which Ingress serves each host and path: the oldest that claims it (olderFirst), so a newer
 * one loses that path with a warning naming the holder. From the claims follow the routes that
 * won, their backends, the maps' entries and each Ingress's warnings (its lost paths, then the
 * problems of its won routes' backends).
 *
 * `claimAll` decides every claim of a state; `editClaims` (claim-edits.ts) edits the
 * ClaimState it left by the Ingresses that went and came. Both give what the other would
 * (routing-model's property tests build a model both ways).
 */
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import { BackendSource, ClaimState, candidates, labelOf } from './claim-state.ts';
import type { KeptBackends } from './model-backends.ts';
import type { ModelRoute } from './model-types.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';

/**
 * Decides every claim of a state, `ingresses` oldest first (valid ones only). `earlier`: the
 * last state's claims, whose backends are reused while their sources are the same objects.
 */
export function claimAll(
  ingresses: readonly ValidIngress[],
  snapshot: ClusterSnapshot,
  kept: KeptBackends | undefined,
  earlier: ClaimState | undefined,
): { readonly state: ClaimState; readonly won: readonly ModelRoute[] } {
  const state = new ClaimState(snapshot);
  const source = new BackendSource(
    snapshot,
    kept,
    earlier?.holdsFor(snapshot) === true ? earlier.backends : undefined,
  );
  const won: ModelRoute[] = [];
  for (const ingress of ingresses) {
    for (const candidate of candidates(ingress)) {
      const { key, route } = candidate;
      const holder = state.holders.get(key);
      if (holder !== undefined) {
        // A path written twice in one Ingress is served once; another Ingress's is contested.
        if (labelOf(holder) === route.ingress) continue;
        const list = state.contested.get(key);
        if (list === undefined) state.contested.set(key, [holder, ingress]);
        else if (list.at(-1) !== ingress) list.push(ingress);
        continue;
      }
      state.useWon(ingress.namespace, candidate, source);
      state.holders.set(key, ingress);
      won.push(route);
    }
    // Older Ingresses came first: the claims of this one's keys are settled.
    state.tellWarnings(ingress);
  }
  return { state, won };
}
