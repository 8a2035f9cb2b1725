/**
 * `haptic crds apply`: server-side applies the embedded CRDs (field manager `haptic`, forcing
 * ownership of the fields it sets). Creates a missing CRD, upgrades an existing one, never
 * deletes: custom resources survive every install, upgrade and uninstall.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { serverSideApply } from '../kube/server-side-apply.ts';
import { readEmbeddedCrds } from './embedded-crds.ts';

export const crdFieldManager = 'haptic';

export interface AppliedCrd {
  readonly name: string;
  readonly resourceVersion: string;
}

export async function applyEmbeddedCrds(kc: KubeConfig): Promise<AppliedCrd[]> {
  const applied: AppliedCrd[] = [];
  for (const { name, manifest } of readEmbeddedCrds()) {
    try {
      const result = await serverSideApply(
        kc,
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        manifest,
        { fieldManager: crdFieldManager, force: true },
      );
      const metadata = result.metadata as { resourceVersion?: string } | undefined;
      applied.push({ name, resourceVersion: metadata?.resourceVersion ?? '' });
    } catch (error) {
      throw new HapticError(
        errorCodes.KUBE_REQUEST_FAILED,
        `Applying CustomResourceDefinition ${name} failed (${describeError(error)}); check that the Job's ServiceAccount may create, get and patch it.`,
        { cause: error },
      );
    }
  }
  return applied;
}
