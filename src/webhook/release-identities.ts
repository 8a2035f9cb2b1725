/**
 * The agent identities a release's webhook guards, from its values (the embedded chart's
 * defaults under the given layers): provider, issuer and identity Secret names, peer names,
 * each replaceable by an explicit override (the chart passes them to `haptic run`).
 * Undefined with legacy Basic authentication (no identities).
 */
import {
  type AgentIdentityConfig,
  type EmbeddedChart,
  coalesceValues,
  mergeValueLayers,
  planRelease,
  readReleaseValues,
} from '../validation/index.ts';

/**
 * Explicit identity settings; each one present wins over what the values give. With an
 * explicit provider, the issuer Secret is only the one named (a provider may have none).
 */
export type IdentityOverrides = Partial<
  Pick<
    AgentIdentityConfig,
    'provider' | 'issuerSecret' | 'serverSecret' | 'clientSecret' | 'serverName' | 'clientName'
  >
>;

export function releaseIdentities(
  release: string,
  namespace: string,
  chart: EmbeddedChart,
  layers: readonly Record<string, unknown>[] = [],
  overrides: IdentityOverrides = {},
): AgentIdentityConfig | undefined {
  const values = readReleaseValues(coalesceValues(mergeValueLayers(layers), chart.defaults));
  const plan = planRelease(release, namespace, values);
  if (plan.agentProvider === 'legacy') return undefined;
  const named = (role: 'issuer' | 'server' | 'client'): string | undefined =>
    plan.secrets.find((secret) => secret.role === role)?.name;
  // An explicit provider brings its own issuer: none unless --issuer-secret names one.
  const issuerSecret = overrides.provider === undefined ? named('issuer') : overrides.issuerSecret;
  return {
    namespace,
    provider: plan.agentProvider,
    ...(issuerSecret === undefined ? {} : { issuerSecret }),
    serverSecret: named('server') ?? '',
    clientSecret: named('client') ?? '',
    serverName: plan.peerNames.server,
    clientName: plan.peerNames.client,
    ...overrides,
  };
}
