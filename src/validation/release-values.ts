import { isRecord } from '../is-record.ts';
/**
 * The values the rules read, typed. Read from the coalesced values (chart defaults included)
 * with the chart's own semantics: a missing, empty, zero or false value is "not set", exactly
 * as `{{ if ... }}` in the templates treats it.
 */

export interface IssuerRefValues {
  readonly name: string;
  readonly kind: string;
  readonly group: string;
}

export interface AgentTlsValues {
  readonly enabled: boolean;
  readonly managed: boolean;
  /** The raw value, so a rule can name what it found. */
  readonly certValidityDays: unknown;
  readonly issuerSecretName: string;
  readonly serverSecretName: string;
  readonly clientSecretName: string;
  readonly serverName: string;
  readonly clientName: string;
  readonly certManager: {
    readonly enabled: boolean;
    readonly createIssuer: boolean;
    readonly issuerRef: IssuerRefValues;
  };
}

export interface ReleaseValues {
  readonly nameOverride: string;
  readonly fullnameOverride: string;
  readonly credentialsSecret: string;
  readonly webhook: {
    /** controller.webhook.enabled: false registers no webhook, whatever the source. */
    readonly enabled: boolean;
    readonly secretName: string;
    readonly caBundle: string;
    readonly certManager: boolean;
  };
  readonly agentTls: AgentTlsValues;
  readonly defaultSsl: {
    readonly secretName: string;
    /** null (or absent) follows controller.webhook.certManager.enabled. */
    readonly certManager: boolean | null;
  };
  readonly preRolloutValidation: boolean;
}

function at(values: unknown, path: readonly string[]): unknown {
  let current = values;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** Go template truthiness: false, 0, "", nil, empty map and empty list are false. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') {
    return false;
  }
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

function text(values: unknown, path: readonly string[]): string {
  const value = at(values, path);
  return typeof value === 'string' ? value : '';
}

function flag(values: unknown, path: readonly string[]): boolean {
  return truthy(at(values, path));
}

/** Reads the values the rules need from coalesced values. Never throws. */
export function readReleaseValues(values: unknown): ReleaseValues {
  const tls = ['haproxy', 'agent', 'tls'];
  const cm = [...tls, 'certManager'];
  const defaultSslCertManager = at(values, ['defaultSSLCertificate', 'certManager', 'enabled']);
  return {
    nameOverride: text(values, ['nameOverride']),
    fullnameOverride: text(values, ['fullnameOverride']),
    credentialsSecret: text(values, ['credentials', 'existingSecret']),
    webhook: {
      enabled: flag(values, ['controller', 'webhook', 'enabled']),
      secretName: text(values, ['controller', 'webhook', 'secretName']),
      caBundle: text(values, ['controller', 'webhook', 'caBundle']),
      certManager: flag(values, ['controller', 'webhook', 'certManager', 'enabled']),
    },
    agentTls: {
      enabled: flag(values, [...tls, 'enabled']),
      managed: flag(values, [...tls, 'managed']),
      certValidityDays: at(values, [...tls, 'certValidityDays']),
      issuerSecretName: text(values, [...tls, 'issuerSecretName']),
      serverSecretName: text(values, [...tls, 'serverSecretName']),
      clientSecretName: text(values, [...tls, 'clientSecretName']),
      serverName: text(values, [...tls, 'serverName']),
      clientName: text(values, [...tls, 'clientName']),
      certManager: {
        enabled: flag(values, [...cm, 'enabled']),
        createIssuer: flag(values, [...cm, 'createIssuer']),
        issuerRef: {
          name: text(values, [...cm, 'issuerRef', 'name']),
          kind: text(values, [...cm, 'issuerRef', 'kind']),
          group: text(values, [...cm, 'issuerRef', 'group']),
        },
      },
    },
    defaultSsl: {
      secretName: text(values, ['defaultSSLCertificate', 'secretName']),
      certManager: typeof defaultSslCertManager === 'boolean' ? defaultSslCertManager : null,
    },
    preRolloutValidation: flag(values, ['preRolloutValidation', 'enabled']),
  };
}
