/**
 * `haptic crds apply`: server-side applies the embedded CRDs (field manager `haptic`, forcing
 * ownership of the fields it sets). Creates a missing CRD, upgrades an existing one, never
 * deletes: custom resources survive every install, upgrade and uninstall.
 */
import { KubernetesObjectApi, PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import { describeApiError } from '../kube/api-errors.ts';
import { readEmbeddedCrds } from './embedded-crds.ts';

export const crdFieldManager = 'haptic';

export interface AppliedCrd {
  readonly name: string;
  readonly resourceVersion: string;
}

export async function applyEmbeddedCrds(kc: KubeConfig): Promise<AppliedCrd[]> {
  const client = KubernetesObjectApi.makeApiClient(kc);
  const applied: AppliedCrd[] = [];
  for (const crd of readEmbeddedCrds()) {
    const name = crd.metadata?.name ?? '';
    try {
      const result = await client.patch(
        crd,
        undefined,
        undefined,
        crdFieldManager,
        true,
        PatchStrategy.ServerSideApply,
      );
      applied.push({ name, resourceVersion: result.metadata?.resourceVersion ?? '' });
    } catch (error) {
      throw new HapticError(
        errorCodes.KUBE_REQUEST_FAILED,
        `Applying CustomResourceDefinition ${name} failed (${describeApiError(error)}); check that the Job's ServiceAccount may create, get and patch it.`,
        { cause: error },
      );
    }
  }
  return applied;
}
