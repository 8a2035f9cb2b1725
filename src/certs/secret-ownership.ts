/**
 * May the default provider write these Secrets? Each existing Secret must carry the default
 * provider's marker (see `src/validation/secret-provider.ts`, the one classification shared
 * with the validator), and an identity must be a TLS Secret. Pure: a refusal is a sentence.
 */
import type { V1Secret } from '@kubernetes/client-node';
import {
  certificateProviderLabel,
  defaultProviderLabelValue,
  describeProvider,
  providerMarkers,
  secretProvider,
} from '../secrets/provider-markers.ts';
import { type Violation, renewalReasons } from './reasons.ts';
import {
  type RenewalSecretNames,
  type RenewalTarget,
  renewalTargets,
  secretTypes,
  targetLabels,
} from './renewal-targets.ts';

/** The three Secrets as read: `undefined` when absent. */
export type SecretSnapshot = Readonly<Record<RenewalTarget, V1Secret | undefined>>;

function foreignOwner(
  target: RenewalTarget,
  secret: V1Secret,
  names: RenewalSecretNames,
): Violation | undefined {
  const metadata = secret.metadata ?? {};
  const provider = secretProvider(metadata);
  const name = `${names.namespace}/${names[target]}`;
  if (provider === 'default') return undefined;
  const markers = providerMarkers(metadata);
  const found =
    markers.length === 0
      ? ` (no label ${certificateProviderLabel}=${defaultProviderLabelValue})`
      : ` (${markers.join(', ')})`;
  const fix =
    provider === 'external'
      ? `If it is a leftover of the default provider, add the label ${certificateProviderLabel}=${defaultProviderLabelValue}; otherwise choose another Secret name for the ${targetLabels[target]}.`
      : `Remove the markers of the provider that does not own it, or choose another Secret name for the ${targetLabels[target]}.`;
  return {
    reason: renewalReasons.SecretOwnedByOtherProvider,
    message: `Secret ${name} (${targetLabels[target]}) belongs to ${describeProvider(provider)}${found}; the default provider never writes into another provider's Secret. ${fix}`,
  };
}

/** Identities must be TLS Secrets; the issuer, never mounted, keeps whatever type it has. */
function wrongType(
  target: RenewalTarget,
  secret: V1Secret,
  names: RenewalSecretNames,
): Violation | undefined {
  if (target === 'issuer') return undefined;
  const expected = secretTypes[target];
  const actual = secret.type ?? 'Opaque';
  if (actual === expected) return undefined;
  return {
    reason: renewalReasons.IdentitySecretTypeInvalid,
    message:
      `Secret ${names.namespace}/${names[target]} (${targetLabels[target]}) has type ${actual}, not ${expected}, ` +
      `and a Secret's type cannot change; delete it so the next run recreates it from the stored CA.`,
  };
}

/** Why the run must not touch these Secrets, or undefined when all existing ones are its own. */
export function ownershipRefusal(
  snapshot: SecretSnapshot,
  names: RenewalSecretNames,
): Violation | undefined {
  for (const target of renewalTargets) {
    const secret = snapshot[target];
    if (secret === undefined) continue;
    const refusal = foreignOwner(target, secret, names) ?? wrongType(target, secret, names);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}
