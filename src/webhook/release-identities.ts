/**
 * The agent identities a release's webhook guards, from its values (the embedded chart's
 * defaults under the given layers): provider, issuer and identity Secret names, peer names.
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

export function releaseIdentities(
  release: string,
  namespace: string,
  chart: EmbeddedChart,
  layers: readonly Record<string, unknown>[] = [],
): AgentIdentityConfig | undefined {
  const values = readReleaseValues(coalesceValues(mergeValueLayers(layers), chart.defaults));
  const plan = planRelease(release, namespace, values);
  if (plan.agentProvider === 'legacy') return undefined;
  const named = (role: 'issuer' | 'server' | 'client'): string | undefined =>
    plan.secrets.find((secret) => secret.role === role)?.name;
  const issuerSecret = named('issuer');
  return {
    namespace,
    provider: plan.agentProvider,
    ...(issuerSecret === undefined ? {} : { issuerSecret }),
    serverSecret: named('server') ?? '',
    clientSecret: named('client') ?? '',
    serverName: plan.peerNames.server,
    clientName: plan.peerNames.client,
  };
}
