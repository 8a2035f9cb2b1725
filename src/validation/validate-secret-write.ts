/**
 * The Secret entry point: a write (create, update, delete) to one of the release's agent
 * identity Secrets or its issuer Secret, judged by the same rules the pre-rollout Job applies
 * to live Secrets, plus the transition rules only a write has (provider markers, CA lineage,
 * a newly set deadline).
 */
import type { IdentityRole } from '../secrets/material.ts';
import { validationCodes } from './codes.ts';
import { type Finding, type ValidationReport, report, secretPath, warning } from './finding.ts';
import { checkIdentity } from './identity-rules.ts';
import {
  type DecodedIssuer,
  checkIssuer,
  viewDefaultIssuer,
  viewKeyPairIssuer,
} from './issuer-rules.ts';
import { providerTakeoverOnWrite } from './provider-rules.ts';
import { type SecretObject, secretLabel } from './secret-data.ts';
import { SecretDecoder } from '../secrets/secret-decoder.ts';
import type { CertificateProvider } from '../secrets/provider-markers.ts';
import { checkTrust } from './trust-rules.ts';

/** The release's agent identities, as the webhook is configured (flags of `haptic webhook`). */
export interface AgentIdentityConfig {
  readonly namespace: string;
  /** The agent TLS provider of the release. */
  readonly provider: CertificateProvider;
  /** The issuer Secret, when the release has one (default provider, cert-manager createIssuer). */
  readonly issuerSecret?: string;
  readonly serverSecret: string;
  readonly clientSecret: string;
  /** DNS SAN of the agent certificate. */
  readonly serverName: string;
  /** DNS SAN of the controller certificate. */
  readonly clientName: string;
}

export type SecretWriteRole = IdentityRole | 'issuer';

export type SecretWriteOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface SecretWriteRequest {
  /** Which of the release's Secrets is written (see `secretWriteRole`). */
  readonly role: SecretWriteRole;
  readonly operation: SecretWriteOperation;
  /** The Secret before the write (UPDATE, DELETE). */
  readonly old: SecretObject | undefined;
  /** The Secret after the write (CREATE, UPDATE). */
  readonly next: SecretObject | undefined;
  readonly config: AgentIdentityConfig;
  readonly now: Date;
}

/** Which of the release's Secrets `name` in `namespace` is, if any. */
export function secretWriteRole(
  config: AgentIdentityConfig,
  namespace: string,
  name: string,
): SecretWriteRole | undefined {
  if (namespace !== config.namespace) return undefined;
  if (name === config.serverSecret) return 'server';
  if (name === config.clientSecret) return 'client';
  return config.issuerSecret !== undefined && name === config.issuerSecret ? 'issuer' : undefined;
}

function deletion(
  role: SecretWriteRole,
  secret: SecretObject,
  config: AgentIdentityConfig,
): Finding {
  const advice =
    role === 'issuer'
      ? 'the renewal Job cannot recreate the CA: restore the issuer Secret from its backup'
      : config.provider === 'external'
        ? 'restore it from your backup or have its issuer recreate it under the intended CA'
        : 'its provider recreates it at the next run';
  return warning(
    validationCodes.SecretDeleted,
    secretPath(secret.name),
    `Secret ${secretLabel(secret)} is being deleted; ${advice}.`,
  );
}

function decodeIssuer(
  decoder: SecretDecoder,
  config: AgentIdentityConfig,
  secret: SecretObject,
): DecodedIssuer {
  const name = `Secret ${secretLabel(secret)}`;
  return config.provider === 'default'
    ? viewDefaultIssuer(decoder.issuer(secret.data, name))
    : viewKeyPairIssuer(decoder.keyPair(secret.data, name));
}

function materialFindings(
  request: SecretWriteRequest,
  next: SecretObject,
  decoder: SecretDecoder,
): Finding[] {
  const { role, old, config, now } = request;
  const label = secretLabel(next);
  if (role === 'issuer') {
    const before = old === undefined ? undefined : decodeIssuer(decoder, config, old);
    return checkIssuer({
      name: next.name,
      label,
      old: before,
      next: decodeIssuer(decoder, config, next),
      now,
    });
  }
  const state = decoder.identity(next.data, `Secret ${label}`);
  const peerName = role === 'server' ? config.serverName : config.clientName;
  const found = checkIdentity({ name: next.name, label, role, peerName, state, now });
  const material = found === undefined ? [] : [found];
  if (state.state !== 'present') return material;
  // A trust transition (an unrelated CA, say) is usually why a chain stops verifying: name it first.
  // Only the trust fields of the old object are read: its tls.crt and tls.key are not decoded.
  const before = old === undefined ? undefined : decoder.identityTrust(old.data, `Secret ${label}`);
  const transitions = checkTrust({
    name: next.name,
    label,
    old: before?.state === 'present' ? before.material : undefined,
    next: state.material,
    mode: 'write',
    now,
  });
  return [...transitions, ...material];
}

/** Validates one write to the identity or issuer Secret of the release that `request.role` names. */
export function validateSecretWrite(
  request: SecretWriteRequest,
  decoder: SecretDecoder = new SecretDecoder(),
): ValidationReport {
  const { role, operation, old, next, config } = request;
  const subject = next ?? old;
  if (subject === undefined) return report([]);
  if (operation === 'DELETE' || next === undefined)
    return report([deletion(role, subject, config)]);
  const takeover = providerTakeoverOnWrite({
    name: next.name,
    label: secretLabel(next),
    before: old,
    after: next,
    configured: config.provider,
  });
  return report([
    ...(takeover === undefined ? [] : [takeover]),
    ...materialFindings(request, next, decoder),
  ]);
}
