/**
 * The one way the product writes a HAProxyTemplateConfig's status: a JSON merge patch of the
 * status subresource that names only the keys it sets, so the Ready condition (status
 * reporter) and the replicas' TLS entries (status.tls, TLS state publisher) never overwrite
 * each other.
 */
import { type CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from './template-config.ts';

/** Merges `status` into the status of the HAProxyTemplateConfig `namespace/name`. */
export async function patchTemplateConfigStatus(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  status: Readonly<Record<string, unknown>>,
): Promise<void> {
  await custom.patchNamespacedCustomObjectStatus(
    {
      group: templateConfigGroup,
      version: templateConfigVersion,
      namespace,
      plural: templateConfigPlural,
      name,
      body: { status },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
