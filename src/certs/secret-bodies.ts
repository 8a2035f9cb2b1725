/**
 * The Secret objects the default provider writes: its marker label, the type of each target,
 * and the data. A new Secret gets no owner reference (it belongs to no release and survives
 * `helm uninstall`); a replaced one keeps its labels, annotations, finalizers and owner
 * references, its type, and the resourceVersion it was read at, which makes the write
 * conditional.
 */
import type { V1ObjectMeta, V1Secret } from '@kubernetes/client-node';
import {
  certificateProviderLabel,
  defaultProviderLabelValue,
} from '../secrets/provider-markers.ts';
import type { PlannedWrite } from './renewal-plan.ts';
import { type RenewalSecretNames, secretTypes } from './renewal-targets.ts';
import { encodeIdentitySecret } from '../secrets/identity-secret.ts';
import { encodeIssuerSecret } from '../secrets/issuer-secret.ts';

function dataOf(write: PlannedWrite): Record<string, string> {
  return write.target === 'issuer'
    ? encodeIssuerSecret(write.material)
    : encodeIdentitySecret(write.material);
}

/** The body that creates the Secret (`existing` undefined) or replaces `existing`. */
export function secretBody(
  write: PlannedWrite,
  names: RenewalSecretNames,
  existing: V1Secret | undefined,
): V1Secret {
  const data = dataOf(write);
  if (existing === undefined) {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: names[write.target],
        namespace: names.namespace,
        labels: { [certificateProviderLabel]: defaultProviderLabelValue },
      },
      type: secretTypes[write.target],
      data,
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: keptMetadata(existing.metadata ?? {}),
    ...(existing.type === undefined ? {} : { type: existing.type }),
    data,
  };
}

/** The metadata a replacement keeps: everything a user or another controller may have set. */
function keptMetadata(source: V1ObjectMeta): V1ObjectMeta {
  const kept: V1ObjectMeta = {
    labels: { ...source.labels, [certificateProviderLabel]: defaultProviderLabelValue },
  };
  if (source.name !== undefined) kept.name = source.name;
  if (source.namespace !== undefined) kept.namespace = source.namespace;
  if (source.uid !== undefined) kept.uid = source.uid;
  if (source.resourceVersion !== undefined) kept.resourceVersion = source.resourceVersion;
  if (source.annotations !== undefined) kept.annotations = { ...source.annotations };
  if (source.finalizers !== undefined) kept.finalizers = [...source.finalizers];
  if (source.ownerReferences !== undefined) kept.ownerReferences = [...source.ownerReferences];
  return kept;
}
