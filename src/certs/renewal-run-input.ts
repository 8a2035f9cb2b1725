/** The renewal policy's input from the three Secrets as read (decoded, not judged). */
import type { V1Secret } from '@kubernetes/client-node';
import type { IdentityRole } from '../secrets/material.ts';
import type { RenewalInput } from './renewal-input.ts';
import type { RenewalSecretNames } from './renewal-targets.ts';
import { decodeIdentitySecret } from '../secrets/identity-secret.ts';
import { decodeIssuerSecret } from '../secrets/issuer-secret.ts';
import type { SecretSnapshot } from './secret-ownership.ts';

/** What a run is configured with besides the Secrets' names. */
export interface RenewalSettings {
  readonly secrets: RenewalSecretNames;
  /** DNS name of each identity: `--server-name` and `--client-name`. */
  readonly names: Readonly<Record<IdentityRole, string>>;
  /** Validity of anything issued, in days. @default 365 (the policy's default) */
  readonly validityDays?: number;
}

function dataOf(secret: V1Secret | undefined): Record<string, string> | undefined {
  return secret === undefined ? undefined : (secret.data ?? {});
}

/** Decodes the snapshot into the policy's input. */
export function renewalInputOf(snapshot: SecretSnapshot, settings: RenewalSettings): RenewalInput {
  const { secrets } = settings;
  const named = (name: string): string => `${secrets.namespace}/${name}`;
  const input: RenewalInput = {
    issuer: decodeIssuerSecret(dataOf(snapshot.issuer), `Secret ${named(secrets.issuer)}`),
    identities: {
      server: decodeIdentitySecret(dataOf(snapshot.server), `Secret ${named(secrets.server)}`),
      client: decodeIdentitySecret(dataOf(snapshot.client), `Secret ${named(secrets.client)}`),
    },
    names: settings.names,
    secretNames: {
      issuer: named(secrets.issuer),
      server: named(secrets.server),
      client: named(secrets.client),
    },
  };
  return settings.validityDays === undefined
    ? input
    : { ...input, validityDays: settings.validityDays };
}
