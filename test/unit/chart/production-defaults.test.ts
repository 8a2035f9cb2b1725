/**
 * The chart's production defaults, as ingress-nginx, haproxytech and cert-manager charts have
 * them: disruption budgets, topology spread and priority of both Deployments, placement of the
 * Jobs, the HAProxy Service's knobs, HAProxy's probes and its graceful drain.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { bootstrapConfig } from '../../../src/agent/bootstrap-config.ts';
import { readProcessList } from '../../../src/agent/haproxy-reload.ts';
import { MasterSocket } from '../../../src/agent/master-socket.ts';
import type { RenderedObject } from '../../../src/render/index.ts';
import { chartDir, findObject, helmBinaries, renderMode } from './chart-fixtures.ts';

interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string };
}

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
  readonly ports?: readonly { readonly name: string; readonly containerPort: number }[];
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly command?: readonly string[];
  readonly lifecycle?: unknown;
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string }[];
}

interface PodSpec {
  readonly priorityClassName?: string;
  readonly terminationGracePeriodSeconds?: number;
  readonly topologySpreadConstraints?: readonly Record<string, unknown>[];
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: readonly Record<string, unknown>[];
  readonly affinity?: Record<string, unknown>;
  readonly containers: readonly Container[];
  readonly volumes: readonly { readonly name: string; readonly configMap?: { name: string } }[];
}

function podSpec(object: RenderedObject): PodSpec {
  const spec = object.body.spec as {
    template?: { spec: PodSpec };
    jobTemplate?: { spec: { template: { spec: PodSpec } } };
  };
  const pod = spec.template?.spec ?? spec.jobTemplate?.spec.template.spec;
  if (pod === undefined) throw new Error(`${object.kind}/${object.metadata.name} has no pod`);
  return pod;
}

function container(spec: PodSpec, name: string): Container {
  const found = spec.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container ${name}`);
  return found;
}

const budgets = (objects: readonly RenderedObject[]) =>
  objects
    .filter((o) => o.kind === 'PodDisruptionBudget')
    .map((o) => [o.metadata.name, o.body.spec]);

const selector = (component: string) => ({
  'app.kubernetes.io/name': 'haptic',
  'app.kubernetes.io/instance': 'haptic',
  'app.kubernetes.io/component': component,
});

const deployments = [
  ['controller', 'haptic-controller', 'controller'],
  ['haproxy', 'haptic-haproxy', 'loadbalancer'],
] as const;

describe.each(helmBinaries)('production defaults rendered by %s', (binary) => {
  it('gives both Deployments a PodDisruptionBudget keeping one of their two replicas', async () => {
    expect(budgets(await renderMode(binary, {}))).toEqual(
      deployments.map(([, name, component]) => [
        name,
        { minAvailable: 1, selector: { matchLabels: selector(component) } },
      ]),
    );
  });

  it.each(deployments)(
    'leaves out the %s budget with one replica or when disabled, and takes maxUnavailable',
    async (group) => {
      const one = await renderMode(binary, { [group]: { replicas: 1 } });
      const disabled = await renderMode(binary, {
        [group]: { podDisruptionBudget: { enabled: false } },
      });
      const percent = await renderMode(binary, {
        [group]: {
          replicas: 3,
          podDisruptionBudget: { minAvailable: null, maxUnavailable: '34%' },
        },
      });
      expect(budgets(one)).toHaveLength(1);
      expect(budgets(disabled)).toHaveLength(1);
      const name = `haptic-${group}`;
      expect(budgets(percent).find(([n]) => n === name)?.[1]).toMatchObject({
        maxUnavailable: '34%',
      });
    },
  );

  it.each(deployments)(
    'spreads the %s Pods over zones and nodes, preferring but not requiring it',
    async (_, name, component) => {
      const spec = podSpec(findObject(await renderMode(binary, {}), 'Deployment', name));
      expect(spec.topologySpreadConstraints).toEqual(
        ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].map((topologyKey) => ({
          maxSkew: 1,
          topologyKey,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector(component) },
          matchLabelKeys: ['pod-template-hash'],
        })),
      );
      expect(spec.priorityClassName).toBeUndefined();
    },
  );

  it.each(deployments)(
    'takes the %s priority class and spread settings, and drops the spread without keys',
    async (group, name) => {
      const tuned = podSpec(
        findObject(
          await renderMode(binary, {
            [group]: {
              priorityClassName: 'ingress-critical',
              topologySpread: {
                topologyKeys: ['kubernetes.io/hostname'],
                maxSkew: 2,
                whenUnsatisfiable: 'DoNotSchedule',
              },
            },
          }),
          'Deployment',
          name,
        ),
      );
      expect(tuned.priorityClassName).toBe('ingress-critical');
      expect(tuned.topologySpreadConstraints).toMatchObject([
        { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
      ]);
      const none = podSpec(
        findObject(
          await renderMode(binary, { [group]: { topologySpread: { topologyKeys: [] } } }),
          'Deployment',
          name,
        ),
      );
      expect(none.topologySpreadConstraints).toBeUndefined();
    },
  );

  it.each(deployments)(
    'keeps the %s Pods off each other’s nodes unless an affinity is given',
    async (group, name, component) => {
      const term = {
        labelSelector: { matchLabels: selector(component) },
        topologyKey: 'kubernetes.io/hostname',
      };
      const affinity = async (values: Record<string, unknown>) =>
        podSpec(findObject(await renderMode(binary, { [group]: values }), 'Deployment', name))
          .affinity;
      expect(await affinity({})).toEqual({
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
        },
      });
      expect(await affinity({ podAntiAffinityPreset: 'hard' })).toEqual({
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] },
      });
      expect(await affinity({ podAntiAffinityPreset: '' })).toBeUndefined();
      const own = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } };
      expect(await affinity({ affinity: own })).toEqual(own);
    },
  );

  it('places every hook Job and the renewal CronJob by jobs.*', async () => {
    const placement = {
      nodeSelector: { 'node-role.kubernetes.io/infra': '' },
      tolerations: [{ key: 'infra', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
                ],
              },
            ],
          },
        },
      },
    };
    const objects = await renderMode(binary, { jobs: placement });
    const jobs = objects.filter((o) => o.kind === 'Job' || o.kind === 'CronJob');
    expect(jobs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'CronJob/haptic-agent-renewal',
      'Job/haptic-agent-bootstrap',
      'Job/haptic-crds',
      'Job/haptic-haptic-pre-rollout',
      'Job/haptic-webhook-certificate',
    ]);
    for (const job of jobs) expect(podSpec(job)).toMatchObject(placement);
    const defaults = (await renderMode(binary, {})).filter(
      (o) => o.kind === 'Job' || o.kind === 'CronJob',
    );
    for (const job of defaults) {
      const spec = podSpec(job);
      expect([spec.nodeSelector, spec.tolerations, spec.affinity]).toEqual([
        undefined,
        undefined,
        undefined,
      ]);
    }
  });

  it('admits no inbound traffic to the pods of every Job, unless disabled', async () => {
    const objects = await renderMode(binary, {});
    const policy = findObject(objects, 'NetworkPolicy', 'haptic-jobs');
    const spec = policy.body.spec as {
      podSelector: {
        matchLabels: Record<string, string>;
        matchExpressions: { key: string; operator: string; values: string[] }[];
      };
      policyTypes: string[];
      ingress?: unknown;
      egress: unknown;
    };
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(spec.ingress).toBeUndefined();
    expect(spec.egress).toEqual([{}]);
    const [expression] = spec.podSelector.matchExpressions;
    const selects = (labels: Record<string, string>) =>
      Object.entries(spec.podSelector.matchLabels).every(([k, v]) => labels[k] === v) &&
      expression !== undefined &&
      expression.values.includes(labels[expression.key] ?? '');
    const jobs = objects.filter((o) => o.kind === 'Job' || o.kind === 'CronJob');
    for (const job of jobs) {
      const body = job.body.spec as {
        template?: { metadata: { labels: Record<string, string> } };
        jobTemplate?: { spec: { template: { metadata: { labels: Record<string, string> } } } };
      };
      const labels = (body.template ?? body.jobTemplate?.spec.template)?.metadata.labels ?? {};
      expect(selects(labels), `${job.kind}/${job.metadata.name}`).toBe(true);
    }
    for (const name of ['haptic-controller', 'haptic-haproxy']) {
      const template = findObject(objects, 'Deployment', name).body.spec as {
        template: { metadata: { labels: Record<string, string> } };
      };
      expect(selects(template.template.metadata.labels), name).toBe(false);
    }
    const disabled = await renderMode(binary, { jobs: { networkPolicy: { enabled: false } } });
    expect(disabled.some((o) => o.metadata.name === 'haptic-jobs')).toBe(false);
  });

  it("restricts every pod's outbound traffic to the egress rules the values give", async () => {
    const dns = {
      ports: [
        { port: 53, protocol: 'UDP' },
        { port: 53, protocol: 'TCP' },
      ],
    };
    const apiServer = { to: [{ ipBlock: { cidr: '10.0.0.10/32' } }], ports: [{ port: 6443 }] };
    const backends = { to: [{ namespaceSelector: { matchLabels: { tier: 'backend' } } }] };
    const objects = await renderMode(binary, {
      controller: { networkPolicy: { egress: [dns, apiServer] } },
      haproxy: { networkPolicy: { egress: [dns, backends] } },
      jobs: { networkPolicy: { egress: [apiServer] } },
    });
    const egressOf = (name: string) =>
      (findObject(objects, 'NetworkPolicy', name).body.spec as { egress: unknown }).egress;
    expect(egressOf('haptic-controller')).toEqual([dns, apiServer]);
    expect(egressOf('haptic-haproxy')).toEqual([dns, backends]);
    expect(egressOf('haptic-jobs')).toEqual([apiServer]);
  });

  it('renders the HAProxy Service knobs', async () => {
    const service = findObject(
      await renderMode(binary, {
        haproxy: {
          service: {
            annotations: { 'service.beta.kubernetes.io/aws-load-balancer-type': 'external' },
            externalTrafficPolicy: 'Local',
            loadBalancerClass: 'service.k8s.aws/nlb',
            loadBalancerSourceRanges: ['203.0.113.0/24'],
            nodePorts: { http: 30080, https: 30443 },
          },
        },
      }),
      'Service',
      'haptic-haproxy',
    );
    expect(service.metadata.annotations).toEqual({
      'service.beta.kubernetes.io/aws-load-balancer-type': 'external',
    });
    expect(service.body.spec).toMatchObject({
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      loadBalancerClass: 'service.k8s.aws/nlb',
      loadBalancerSourceRanges: ['203.0.113.0/24'],
      ports: [
        { name: 'http', port: 80, targetPort: 'http', nodePort: 30080 },
        { name: 'https', port: 443, targetPort: 'https', nodePort: 30443 },
      ],
    });
    const plain = findObject(await renderMode(binary, {}), 'Service', 'haptic-haproxy');
    expect(Object.keys(plain.body.spec as object).sort()).toEqual(['ports', 'selector', 'type']);
  });

  it('probes HAProxy on its liveness and readiness endpoints', async () => {
    const objects = await renderMode(binary, {});
    const haproxy = container(
      podSpec(findObject(objects, 'Deployment', 'haptic-haproxy')),
      'haproxy',
    );
    expect(haproxy.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'liveness' });
    expect(haproxy.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'ready' });
    expect(haproxy.ports).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'liveness', containerPort: 8081 }),
        expect.objectContaining({ name: 'ready', containerPort: 8082 }),
      ]),
    );
    // The liveness frontend is the chart's, loaded after the delivered configuration.
    expect(haproxy.args?.slice(-2)).toEqual(['-f', '/etc/haproxy/chart/liveness.cfg']);
    const configMap = findObject(objects, 'ConfigMap', 'haptic-haproxy');
    const liveness = (configMap.body.data as Record<string, string>)['liveness.cfg'];
    expect(liveness).toBe(readFileSync(join(chartDir, 'files/haproxy/liveness.cfg'), 'utf8'));
    expect(liveness).toMatch(/^ {2}bind :8081$/m);
    expect(liveness).toMatch(/^ {2}monitor-uri \/healthz$/m);
    // The readiness frontend is the default template's: only a delivered configuration has it.
    const template = readFileSync(
      join(chartDir, 'files/default-template/haproxy.cfg.liquid'),
      'utf8',
    );
    expect(template).toMatch(
      /^ {2}bind "\$\{HAPTIC_LISTEN_ADDRESS\}:8082"\n {2}monitor-uri \/readyz$/m,
    );
  });

  it('keeps HAProxy accepting for drain.delaySeconds, within the grace period', async () => {
    const spec = podSpec(
      findObject(
        await renderMode(binary, {
          haproxy: { terminationGracePeriodSeconds: 120, drain: { delaySeconds: 15 } },
        }),
        'Deployment',
        'haptic-haproxy',
      ),
    );
    expect(spec.terminationGracePeriodSeconds).toBe(120);
    expect(container(spec, 'haproxy').lifecycle).toEqual({ preStop: { sleep: { seconds: 15 } } });
    const defaults = podSpec(
      findObject(await renderMode(binary, {}), 'Deployment', 'haptic-haproxy'),
    );
    expect(defaults.terminationGracePeriodSeconds).toBe(60);
    expect(container(defaults, 'haproxy').lifecycle).toEqual({
      preStop: { sleep: { seconds: 5 } },
    });
    const none = podSpec(
      findObject(
        await renderMode(binary, { haproxy: { drain: { delaySeconds: 0 } } }),
        'Deployment',
        'haptic-haproxy',
      ),
    );
    expect(container(none, 'haproxy').lifecycle).toBeUndefined();
  });
});

/** The haproxy container's command, as the chart renders it. */
async function haproxyContainerCommand(): Promise<readonly string[]> {
  const objects = await renderMode('helm', {});
  return (
    container(podSpec(findObject(objects, 'Deployment', 'haptic-haproxy')), 'haproxy').command ?? []
  );
}

describe('the haproxy container', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haproxy-container-'));
  writeFileSync(join(dir, 'haproxy.cfg'), bootstrapConfig);
  /** The container's process, run here with HAProxy's arguments and the bootstrap configuration. */
  const run = async (socket: string) => {
    const [program = '', ...command] = await haproxyContainerCommand();
    const args = ['-W', '-db', '-S', join(dir, socket), '-f', join(dir, 'haproxy.cfg')];
    return { process: execa(program, [...command, ...args], { reject: false, all: true }) };
  };
  const master = async (socket: string) => {
    const path = join(dir, socket);
    for (;;) {
      const list = await readProcessList(new MasterSocket(path, 1000));
      if (typeof list !== 'string' && list.workers.length > 0) return list.master.pid;
      await sleep(50);
    }
  };

  it("soft-stops HAProxy on the kubelet's SIGTERM and ends with it", async () => {
    const { process: haproxy } = await run('term.sock');
    await master('term.sock');
    haproxy.kill('SIGTERM');
    const result = await haproxy;
    expect(result.exitCode, result.all).toBe(0);
    // A soft stop: the worker finishes (exit 0), where HAProxy's own SIGTERM kills it (143).
    expect(result.all).toMatch(/Current worker \(\d+\) exited with code 0 \(Exit\)/);
  });

  it('ends when HAProxy ends, with its status', async () => {
    const { process: haproxy } = await run('crash.sock');
    process.kill(await master('crash.sock'), 'SIGKILL');
    expect((await haproxy).exitCode).toBe(137);
  });
});

describe('the liveness frontend', () => {
  it("loads after the agent's bootstrap configuration (haproxy -c)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'haproxy-liveness-'));
    writeFileSync(join(dir, 'haproxy.cfg'), bootstrapConfig);
    const liveness = join(chartDir, 'files/haproxy/liveness.cfg');
    const result = await execa('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg'), '-f', liveness], {
      reject: false,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/WARNING|ALERT/);
  });
});
