/**
 * Relations between value keys that the schema cannot express. The sentences are the chart's
 * own (chart/templates/_values-errors.tpl), so `helm template`, the pre-rollout Job and the
 * webhook say the same thing; a test renders the chart and compares them.
 */
import { validationCodes } from './codes.ts';
import { type Check, type Finding, error } from './finding.ts';
import type { ReleasePlan } from './release-plan.ts';
import type { ReleaseValues } from './release-values.ts';
import { decodeCertificateBundle } from '../secrets/key-pair-secret.ts';

export interface ValuesSubject {
  readonly values: ReleaseValues;
  readonly plan: ReleasePlan;
}

/** Go's %q for the names and words these messages quote. */
function quoted(text: string): string {
  return JSON.stringify(text);
}

const tlsKey = 'haproxy.agent.tls';

export const legacyAuthWithoutCredentials: Check<ValuesSubject> = ({ values, plan }) =>
  plan.agentProvider === 'legacy' && values.credentialsSecret === ''
    ? error(
        validationCodes.LegacyCredentialsMissing,
        'credentials.existingSecret',
        `${tlsKey}.enabled is false (legacy Basic authentication), which requires credentials.existingSecret: create a Secret with the keys dataplane_username and dataplane_password and set its name there; the chart never generates passwords.`,
      )
    : undefined;

function externalNameMissing(role: 'server' | 'client'): Check<ValuesSubject> {
  const key = role === 'server' ? 'serverSecretName' : 'clientSecretName';
  const who = role === 'server' ? 'agent' : 'controller';
  return ({ values, plan }) =>
    plan.agentProvider === 'external' && values.agentTls[key] === ''
      ? error(
          validationCodes.ExternalSecretNameMissing,
          `${tlsKey}.${key}`,
          `${tlsKey}.${key} is required when ${tlsKey}.managed is false: name the Secret that holds the ${who} identity (tls.crt, tls.key, ca.crt).`,
        )
      : undefined;
}

export const externalServerSecretNameMissing = externalNameMissing('server');
export const externalClientSecretNameMissing = externalNameMissing('client');

export const externalWithCertManager: Check<ValuesSubject> = ({ values, plan }) =>
  plan.agentProvider === 'external' && values.agentTls.certManager.enabled
    ? error(
        validationCodes.AgentProviderConflict,
        `${tlsKey}.certManager.enabled`,
        `${tlsKey}.managed is false (external identities) but ${tlsKey}.certManager.enabled is true: choose one provider; set certManager.enabled to false to supply your own Secrets, or managed to true to let cert-manager issue them.`,
      )
    : undefined;

/** The chart checks issuerRef whenever cert-manager is enabled and TLS is on. */
function certManagerSelected({ values }: ValuesSubject): boolean {
  return values.agentTls.enabled && values.agentTls.certManager.enabled;
}

export const createdIssuerWithIssuerRef: Check<ValuesSubject> = (subject) => {
  const { certManager } = subject.values.agentTls;
  return certManagerSelected(subject) && certManager.createIssuer && certManager.issuerRef.name
    ? error(
        validationCodes.IssuerRefConflict,
        `${tlsKey}.certManager.issuerRef.name`,
        `${tlsKey}.certManager.issuerRef.name is ${quoted(certManager.issuerRef.name)} but ${tlsKey}.certManager.createIssuer is true: set createIssuer to false to use that issuer, or remove issuerRef.name to let the chart create one.`,
      )
    : undefined;
};

function issuerRefFieldMissing(field: 'name' | 'kind' | 'group'): Check<ValuesSubject> {
  return (subject) => {
    const { certManager } = subject.values.agentTls;
    return certManagerSelected(subject) &&
      !certManager.createIssuer &&
      !certManager.issuerRef[field]
      ? error(
          validationCodes.IssuerRefIncomplete,
          `${tlsKey}.certManager.issuerRef.${field}`,
          `${tlsKey}.certManager.issuerRef.${field} is required when ${tlsKey}.certManager.createIssuer is false: give the ${field} of your existing issuer.`,
        )
      : undefined;
  };
}

export const issuerRefNameMissing = issuerRefFieldMissing('name');
export const issuerRefKindMissing = issuerRefFieldMissing('kind');
export const issuerRefGroupMissing = issuerRefFieldMissing('group');

export const peerNamesEqual: Check<ValuesSubject> = ({ values }) =>
  values.agentTls.enabled && values.agentTls.serverName === values.agentTls.clientName
    ? error(
        validationCodes.PeerNamesEqual,
        `${tlsKey}.clientName`,
        `${tlsKey}.serverName and ${tlsKey}.clientName must differ (both are ${quoted(values.agentTls.serverName)}): an agent certificate must never authorise a controller operation.`,
      )
    : undefined;

/** The schema says the same; this keeps the rule when the validator runs without it. */
export const certValidityOutOfRange: Check<ValuesSubject> = ({ values }) => {
  const days = values.agentTls.certValidityDays;
  return values.agentTls.enabled &&
    !(typeof days === 'number' && Number.isInteger(days) && days >= 1 && days <= 3650)
    ? error(
        validationCodes.CertValidityOutOfRange,
        `${tlsKey}.certValidityDays`,
        `${tlsKey}.certValidityDays must be a whole number of days from 1 to 3650, not ${days === undefined ? 'unset' : JSON.stringify(days)}.`,
      )
    : undefined;
};

const webhookKey = 'controller.webhook';

export const webhookCaBundleWithCertManager: Check<ValuesSubject> = ({ values }) =>
  values.webhook.caBundle && values.webhook.certManager
    ? error(
        validationCodes.WebhookCaBundleConflict,
        `${webhookKey}.caBundle`,
        `${webhookKey}.caBundle is set but ${webhookKey}.certManager.enabled is true: cert-manager injects the CA bundle; remove caBundle.`,
      )
    : undefined;

export const webhookCaBundleWithoutSecret: Check<ValuesSubject> = ({ values }) =>
  values.webhook.caBundle && !values.webhook.certManager && !values.webhook.secretName
    ? error(
        validationCodes.WebhookSecretNameMissing,
        `${webhookKey}.secretName`,
        `${webhookKey}.caBundle is set without ${webhookKey}.secretName: name the Secret that holds the webhook certificate (tls.crt, tls.key).`,
      )
    : undefined;

/** Stricter than the chart, which only looks for a BEGIN line: every block must be a certificate. */
export const webhookCaBundleInvalid: Check<ValuesSubject> = ({ values }) =>
  values.webhook.caBundle &&
  !values.webhook.certManager &&
  decodeCertificateBundle(values.webhook.caBundle, 'controller.webhook.caBundle').state ===
    'unparsable'
    ? error(
        validationCodes.WebhookCaBundleInvalid,
        `${webhookKey}.caBundle`,
        `${webhookKey}.caBundle must be a base64-encoded PEM certificate bundle, for example the output of \`base64 -w0 webhook-ca.crt\`.`,
      )
    : undefined;

export const webhookCaBundleMissing: Check<ValuesSubject> = ({ values }) =>
  !values.webhook.caBundle && values.webhook.secretName && !values.webhook.certManager
    ? error(
        validationCodes.WebhookCaBundleMissing,
        `${webhookKey}.caBundle`,
        `${webhookKey}.caBundle is required with an external ${webhookKey}.secretName: set it to the base64-encoded PEM CA that signed the webhook certificate, or enable ${webhookKey}.certManager.`,
      )
    : undefined;

/** Every pair of value keys that name one Secret; each Secret has exactly one owner. */
export function sharedSecretNames({ plan }: ValuesSubject): Finding[] {
  return plan.secrets.flatMap((a, i) =>
    plan.secrets
      .slice(i + 1)
      .filter((b) => b.name === a.name)
      .map((b) =>
        error(
          validationCodes.SecretNameShared,
          b.source,
          `${a.source} and ${b.source} both name Secret ${quoted(a.name)}: each Secret has exactly one owner; give them different names.`,
        ),
      ),
  );
}

/** The chart's value rules, in the chart's order. */
export function valuesChecks(): readonly Check<ValuesSubject>[] {
  return [
    legacyAuthWithoutCredentials,
    externalServerSecretNameMissing,
    externalClientSecretNameMissing,
    externalWithCertManager,
    createdIssuerWithIssuerRef,
    issuerRefNameMissing,
    issuerRefKindMissing,
    issuerRefGroupMissing,
    peerNamesEqual,
    certValidityOutOfRange,
    webhookCaBundleWithCertManager,
    webhookCaBundleWithoutSecret,
    webhookCaBundleInvalid,
    webhookCaBundleMissing,
  ];
}
