/**
 * The three Secrets a renewal run touches — the issuer and the two identities — and how the
 * run names them: `target` keys, Secret names, types, and the identity roles' leaf roles.
 */
import type { LeafRole } from '../pki/index.ts';
import type { IdentityRole } from '../secrets/material.ts';

/** The issuer Secret or one of the identity Secrets. */
export type RenewalTarget = 'issuer' | IdentityRole;

/** In the order a run reads them and a bootstrap writes them: the issuer first. */
export const renewalTargets = [
  'issuer',
  'server',
  'client',
] as const satisfies readonly RenewalTarget[];

/** Secret type of each target: identities are mounted as TLS Secrets; the issuer never is. */
export const secretTypes = {
  issuer: 'Opaque',
  server: 'kubernetes.io/tls',
  client: 'kubernetes.io/tls',
} as const satisfies Record<RenewalTarget, string>;

/** How messages and logs name each target. */
export const targetLabels = {
  issuer: 'issuer',
  server: 'agent (server) identity',
  client: 'controller (client) identity',
} as const satisfies Record<RenewalTarget, string>;

/** The leaf each identity holds: the agent serves, the controller connects. */
export const leafRoles = { server: 'agent', client: 'controller' } as const satisfies Record<
  IdentityRole,
  LeafRole
>;

/** Names of the three Secrets, all in one namespace. */
export interface RenewalSecretNames {
  readonly namespace: string;
  readonly issuer: string;
  readonly server: string;
  readonly client: string;
}
