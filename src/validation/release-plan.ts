/**
 * What a release with these values manages: its certificate providers and the Secrets each
 * one owns, with the names the chart derives (chart-names.ts, the port of
 * chart/templates/_helpers.tpl held equal to it by a property test; _certificates.tpl for the
 * providers).
 */
import { componentName, preRolloutNames, releaseFullname } from './chart-names.ts';
import type { ReleaseValues } from './release-values.ts';
import type { CertificateProvider } from '../secrets/provider-markers.ts';

/** The agent TLS provider of a release: exactly one. */
export type AgentTlsProvider = 'legacy' | 'external' | 'cert-manager' | 'default';

export type SecretRole =
  'issuer' | 'server' | 'client' | 'credentials' | 'webhook' | 'webhook-ca' | 'default-ssl';

export interface PlannedSecret {
  readonly name: string;
  readonly role: SecretRole;
  /** The provider that writes it; undefined for the credentials Secret (no certificate). */
  readonly provider: CertificateProvider | undefined;
  /** The value key that names it, as messages quote it. */
  readonly source: string;
  /** Whether the pre-rollout Job reads it (its Role grants `get` on it). */
  readonly readable: boolean;
}

export interface ReleasePlan {
  readonly release: string;
  readonly namespace: string;
  readonly fullname: string;
  readonly agentProvider: AgentTlsProvider;
  /** Where the webhook's serving certificate comes from (the chart's haptic.webhook.source). */
  readonly webhookSource: 'cert-manager' | 'external' | 'default' | 'none';
  /** Every Secret the release names, in the chart's order; empty names left out. */
  readonly secrets: readonly PlannedSecret[];
  /** DNS SANs of the agent (server) and controller (client) identities. */
  readonly peerNames: { readonly server: string; readonly client: string };
  readonly controllerDeployment: string;
  readonly haproxyDeployment: string;
  readonly webhookService: string;
  readonly preRolloutJob: string;
  readonly valuesSecret: string;
}

export function agentTlsProvider(values: ReleaseValues): AgentTlsProvider {
  const tls = values.agentTls;
  if (!tls.enabled) return 'legacy';
  if (!tls.managed) return 'external';
  return tls.certManager.enabled ? 'cert-manager' : 'default';
}

function webhookSource(values: ReleaseValues): ReleasePlan['webhookSource'] {
  if (!values.webhook.enabled) return 'none';
  if (values.webhook.certManager) return 'cert-manager';
  return values.webhook.secretName === '' ? 'default' : 'external';
}

/** The webhook's Secret: the default source has a name of its own (providers change with names). */
function webhookSecretName(
  values: ReleaseValues,
  source: ReleasePlan['webhookSource'],
  component: (suffix: string) => string,
): string {
  if (source === 'default') return component('webhook-default-tls');
  return values.webhook.secretName === '' ? component('webhook-tls') : values.webhook.secretName;
}

function agentSecrets(
  values: ReleaseValues,
  provider: AgentTlsProvider,
  component: (suffix: string) => string,
): PlannedSecret[] {
  if (provider === 'legacy') return [];
  const tls = values.agentTls;
  const owner: CertificateProvider = provider;
  const secrets: PlannedSecret[] = [];
  if (provider === 'default' || (provider === 'cert-manager' && tls.certManager.createIssuer)) {
    secrets.push({
      name: tls.issuerSecretName === '' ? component('agent-ca') : tls.issuerSecretName,
      role: 'issuer',
      provider: owner,
      source: 'haproxy.agent.tls.issuerSecretName',
      readable: true,
    });
  }
  const managed = provider !== 'external';
  const named = (given: string, suffix: string): string =>
    given === '' && managed ? component(suffix) : given;
  secrets.push(
    {
      name: named(tls.serverSecretName, 'agent-server-tls'),
      role: 'server',
      provider: owner,
      source: 'haproxy.agent.tls.serverSecretName',
      readable: true,
    },
    {
      name: named(tls.clientSecretName, 'agent-client-tls'),
      role: 'client',
      provider: owner,
      source: 'haproxy.agent.tls.clientSecretName',
      readable: true,
    },
  );
  return secrets;
}

/** Derives the release's providers and Secret names from its (coalesced) values. */
export function planRelease(
  release: string,
  namespace: string,
  values: ReleaseValues,
): ReleasePlan {
  const fullname = releaseFullname(release, values);
  const component = (suffix: string): string => componentName(fullname, suffix);
  const agentProvider = agentTlsProvider(values);
  const webhook = webhookSource(values);
  const secrets = agentSecrets(values, agentProvider, component);
  secrets.push({
    name: values.credentialsSecret,
    role: 'credentials',
    provider: undefined,
    source: 'credentials.existingSecret',
    readable: true,
  });
  if (webhook !== 'none') {
    secrets.push({
      name: webhookSecretName(values, webhook, component),
      role: 'webhook',
      provider: webhook,
      source:
        webhook === 'default'
          ? "the chart's webhook certificate (controller.webhook)"
          : 'controller.webhook.secretName',
      readable: true,
    });
  }
  if (webhook === 'cert-manager') {
    secrets.push({
      name: component('webhook-ca'),
      role: 'webhook-ca',
      provider: 'cert-manager',
      source: "the chart's webhook CA (controller.webhook.certManager)",
      readable: false,
    });
  }
  const sslByCertManager = values.defaultSsl.certManager ?? values.webhook.certManager;
  secrets.push({
    name:
      sslByCertManager && values.defaultSsl.secretName === ''
        ? component('default-ssl-certificate')
        : values.defaultSsl.secretName,
    role: 'default-ssl',
    provider: sslByCertManager ? 'cert-manager' : 'external',
    source: 'defaultSSLCertificate.secretName',
    readable: true,
  });
  const { job, valuesSecret } = preRolloutNames(release);
  return {
    release,
    namespace,
    fullname,
    agentProvider,
    webhookSource: webhook,
    secrets: secrets.filter((secret) => secret.name !== ''),
    peerNames: { server: values.agentTls.serverName, client: values.agentTls.clientName },
    controllerDeployment: component('controller'),
    haproxyDeployment: component('haproxy'),
    webhookService: component('webhook'),
    preRolloutJob: job,
    valuesSecret,
  };
}

/** The planned Secret with this role, if the release has one. */
export function plannedSecret(plan: ReleasePlan, role: SecretRole): PlannedSecret | undefined {
  return plan.secrets.find((secret) => secret.role === role);
}
