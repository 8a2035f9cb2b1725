/**
 * Combinations of the production values (disruption budgets, Service knobs, drain) the chart
 * refuses, each with one sentence, and the ones it accepts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import { HapticError, errorCodes } from '../../../src/errors.ts';
import { renderChart } from '../../../src/render/index.ts';
import { helmBinaries } from './chart-fixtures.ts';

const budget = (group: string, settings: Record<string, unknown>, replicas = 2) => ({
  [group]: { replicas, podDisruptionBudget: settings },
});
const service = (settings: Record<string, unknown>) => ({ haproxy: { service: settings } });

/** The HAProxy build the image and the host's checks run (image/assemble.sh, dev/install-haproxy.sh). */
const pinnedHaproxy = readFileSync(
  join(projectRoot, 'tools/haproxy/debian-version'),
  'utf8',
).trim();
const otherHaproxy = (haproxyVersion?: string) => ({
  haproxy: { image: { repository: 'registry.example.com/haproxy', tag: '3.2', haproxyVersion } },
});

const blocks = (group: string, bound: string, replicas: number) =>
  `${group}.podDisruptionBudget.${bound}, which allows no eviction of the ${replicas} replicas: the budget would block every node drain; allow at least one Pod to be evicted, for example with minAvailable ${replicas - 1}.`;

/** Values that break a rule, and the sentence `helm template` fails with. */
const rules: readonly (readonly [string, Record<string, unknown>, string])[] = [
  [
    'a budget with both bounds',
    budget('controller', { maxUnavailable: 1 }),
    'controller.podDisruptionBudget sets both minAvailable and maxUnavailable: a PodDisruptionBudget takes one; set the other to null.',
  ],
  [
    'a budget with neither bound',
    budget('haproxy', { minAvailable: null }),
    'haproxy.podDisruptionBudget sets neither minAvailable nor maxUnavailable: set one of them, or set enabled to false.',
  ],
  [
    'minAvailable equal to the replicas',
    budget('haproxy', { minAvailable: 2 }),
    blocks('haproxy', 'minAvailable is 2', 2),
  ],
  [
    'a minAvailable percentage that rounds up to every replica',
    budget('controller', { minAvailable: '67%' }, 3),
    blocks('controller', 'minAvailable is 67%', 3),
  ],
  [
    'maxUnavailable 0',
    budget('haproxy', { minAvailable: null, maxUnavailable: 0 }),
    blocks('haproxy', 'maxUnavailable is 0', 2),
  ],
  [
    'maxUnavailable 0%',
    budget('haproxy', { minAvailable: null, maxUnavailable: '0%' }, 4),
    blocks('haproxy', 'maxUnavailable is 0%', 4),
  ],
  [
    'node ports on a ClusterIP Service',
    service({ type: 'ClusterIP', nodePorts: { https: 30443 } }),
    'haproxy.service.nodePorts is set but haproxy.service.type is ClusterIP, which has no node ports: set type to NodePort or LoadBalancer, or set the nodePorts to null.',
  ],
  [
    'an external traffic policy on a ClusterIP Service',
    service({ type: 'ClusterIP', externalTrafficPolicy: 'Local' }),
    'haproxy.service.externalTrafficPolicy is set but haproxy.service.type is ClusterIP, which takes no external traffic: set type to NodePort or LoadBalancer, or remove externalTrafficPolicy.',
  ],
  [
    'a load balancer class on a NodePort Service',
    service({ type: 'NodePort', loadBalancerClass: 'example.com/lb' }),
    'haproxy.service.loadBalancerClass is set but haproxy.service.type is NodePort: it applies to type LoadBalancer only; set the type or remove loadBalancerClass.',
  ],
  [
    'source ranges on a ClusterIP Service',
    service({ type: 'ClusterIP', loadBalancerSourceRanges: ['10.0.0.0/8'] }),
    'haproxy.service.loadBalancerSourceRanges is set but haproxy.service.type is ClusterIP: it applies to type LoadBalancer only; set the type or remove loadBalancerSourceRanges.',
  ],
  [
    'another HAProxy image that does not declare the build the check runs',
    otherHaproxy(),
    `haproxy.image.repository is "registry.example.com/haproxy", but the configuration check runs HAProxy ${pinnedHaproxy} (the haptic image's): set haproxy.image.haproxyVersion to "${pinnedHaproxy}" once that image runs exactly that build (haproxy -v), or leave haproxy.image.repository empty to run the haptic image's HAProxy; otherwise a configuration the check accepts may not load on the data plane, or the reverse.`,
  ],
  [
    'another HAProxy image of another version',
    otherHaproxy('3.2.4-1'),
    `haproxy.image.repository is "registry.example.com/haproxy", but the configuration check runs HAProxy ${pinnedHaproxy} (the haptic image's): set haproxy.image.haproxyVersion to "${pinnedHaproxy}" once that image runs exactly that build (haproxy -v), or leave haproxy.image.repository empty to run the haptic image's HAProxy; otherwise a configuration the check accepts may not load on the data plane, or the reverse.`,
  ],
  [
    'a drain delay as long as the grace period',
    { haproxy: { terminationGracePeriodSeconds: 30, drain: { delaySeconds: 30 } } },
    'haproxy.drain.delaySeconds (30) must be less than haproxy.terminationGracePeriodSeconds (30): the kubelet stops HAProxy at the end of the grace period, leaving no time to finish requests in flight; raise terminationGracePeriodSeconds.',
  ],
];

/** Schema violations, with the path helm names. */
const schemaViolations: readonly (readonly [string, Record<string, unknown>, string])[] = [
  [
    'a budget percentage without %',
    budget('haproxy', { minAvailable: 'half' }),
    "at '/haproxy/podDisruptionBudget/minAvailable'",
  ],
  [
    'an unknown whenUnsatisfiable',
    { controller: { topologySpread: { whenUnsatisfiable: 'Sometimes' } } },
    "at '/controller/topologySpread/whenUnsatisfiable'",
  ],
  [
    'an unknown external traffic policy',
    service({ externalTrafficPolicy: 'Nearest' }),
    "at '/haproxy/service/externalTrafficPolicy'",
  ],
  [
    'a source range that is not a CIDR',
    service({ loadBalancerSourceRanges: ['office'] }),
    "at '/haproxy/service/loadBalancerSourceRanges/0'",
  ],
  [
    'an egress rule with a misspelt key',
    { controller: { networkPolicy: { egress: [{ too: [] }] } } },
    "at '/controller/networkPolicy/egress/0': additional properties 'too' not allowed",
  ],
  [
    'an egress port out of range',
    { jobs: { networkPolicy: { egress: [{ ports: [{ port: 70000 }] }] } } },
    "at '/jobs/networkPolicy/egress/0/ports/0/port'",
  ],
  [
    'an unknown key among the Job settings',
    { jobs: { nodeSelectors: {} } },
    "at '/jobs': additional properties 'nodeSelectors' not allowed",
  ],
];

async function failure(binary: (typeof helmBinaries)[number], values: Record<string, unknown>) {
  try {
    await renderChart({ helmBin: toolPath(binary), values });
  } catch (error) {
    if (error instanceof HapticError) return error;
    throw error;
  }
  throw new Error('expected the render to fail');
}

describe.each(helmBinaries)('production values rejected by %s template', (binary) => {
  it.each(rules)('fails on %s with one clear sentence', async (_, values, sentence) => {
    const error = await failure(binary, values);
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toBe(`invalid values for release "haptic":\n- ${sentence}`);
  });

  it.each(schemaViolations)("rejects %s with helm's schema error", async (_, values, detail) => {
    const error = await failure(binary, values);
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toContain("values don't meet the specifications of the schema(s)");
    expect(error.message).toContain(detail);
  });

  it.each([
    ['a budget that allows one eviction of three', budget('haproxy', { minAvailable: '66%' }, 3)],
    ['a single replica with any budget', budget('haproxy', { minAvailable: 5 }, 1)],
    [
      'node ports, a policy, a class and ranges on a LoadBalancer Service',
      service({
        nodePorts: { http: 30080 },
        externalTrafficPolicy: 'Local',
        loadBalancerClass: 'example.com/lb',
        loadBalancerSourceRanges: ['203.0.113.0/24'],
      }),
    ],
    ['no drain delay', { haproxy: { drain: { delaySeconds: 0 } } }],
    ['another HAProxy image that runs the build the check runs', otherHaproxy(pinnedHaproxy)],
  ])('accepts %s', async (_, values) => {
    await expect(renderChart({ helmBin: toolPath(binary), values })).resolves.toBeDefined();
  });
});

describe('the HAProxy build the chart checks with', () => {
  it('is the one the image installs (tools/haproxy/debian-version)', () => {
    const chart = parse(readFileSync(join(projectRoot, 'chart/Chart.yaml'), 'utf8')) as {
      annotations: Record<string, string>;
    };
    expect(chart.annotations['haptic.haproxy.org/haproxy-version']).toBe(pinnedHaproxy);
  });
});
