/**
 * controller.endpoints reaches `haptic run` as flags its own parsers read, the own-Pods
 * selector picks exactly the release's HAProxy and controller Pods, and the Nodes are read
 * only when the values leave the Pod CIDRs to them.
 */
import { describe, expect, it } from 'vitest';
import { cidrList, nonEmptyCidrList } from '../../../src/cli/option-parsers.ts';
import type { RenderedObject } from '../../../src/render/index.ts';
import { findObject, renderMode } from './chart-fixtures.ts';

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
}

interface PodTemplate {
  readonly template: {
    readonly metadata: { readonly labels: Readonly<Record<string, string>> };
    readonly spec: { readonly containers: readonly Container[] };
  };
}

interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

async function render(values: Readonly<Record<string, unknown>>) {
  return renderMode('helm', values);
}

function controllerArgs(objects: readonly RenderedObject[]): Map<string, string> {
  const spec = findObject(objects, 'Deployment', 'haptic-controller').body.spec as PodTemplate;
  const container = spec.template.spec.containers.find((c) => c.name === 'controller');
  return new Map(
    (container?.args ?? [])
      .map((arg) => /^--([a-z-]+)=(.*)$/.exec(arg))
      .flatMap((match) => (match === null ? [] : [[match[1] ?? '', match[2] ?? ''] as const])),
  );
}

/** Whether a label selector of equality and set-based `in` terms selects `labels`. */
function selects(selector: string, labels: Readonly<Record<string, string>>): boolean {
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return terms.every((term) => {
    const set = /^\s*([\w./-]+)\s+in\s+\(([^)]*)\)\s*$/.exec(term);
    if (set !== null) {
      return (set[2] ?? '').split(',').includes(labels[set[1] ?? ''] ?? '\0');
    }
    const [key = '', value = ''] = term.split('=');
    return labels[key.trim()] === value.trim();
  });
}

function podLabels(objects: readonly RenderedObject[]): Map<string, Record<string, string>> {
  const labels = new Map<string, Record<string, string>>();
  for (const object of objects) {
    const spec = object.body.spec as
      { template?: PodTemplate['template']; jobTemplate?: { spec: PodTemplate } } | undefined;
    const template = spec?.template ?? spec?.jobTemplate?.spec.template;
    if (template !== undefined) {
      labels.set(`${object.kind}/${object.metadata.name}`, template.metadata.labels);
    }
  }
  return labels;
}

function clusterRules(objects: readonly RenderedObject[]): readonly Rule[] {
  const role = findObject(objects, 'ClusterRole', 'haptic-haptic-controller').body as {
    rules: readonly Rule[];
  };
  return role.rules;
}

describe('controller.endpoints', () => {
  it("selects the release's HAProxy and controller Pods as its own, and no other Pod", async () => {
    const objects = await render({});
    const selector = controllerArgs(objects).get('own-pod-selector') ?? '';
    const selected = [...podLabels(objects)]
      .filter(([, labels]) => selects(selector, labels))
      .map(([name]) => name)
      .sort();
    expect(selected).toEqual(['Deployment/haptic-controller', 'Deployment/haptic-haproxy']);
  });

  it('leaves the Pod CIDRs to the Nodes by default, and grants reading them', async () => {
    const objects = await render({});
    const args = controllerArgs(objects);
    expect(args.has('pod-cidrs')).toBe(false);
    expect(args.has('allowed-endpoint-cidrs')).toBe(false);
    expect(clusterRules(objects)).toContainEqual({
      apiGroups: [''],
      resources: ['nodes'],
      verbs: ['list', 'watch'],
    });
  });

  it('passes Pod CIDRs and allowed CIDRs that haptic run reads back, and reads no Nodes then', async () => {
    const podCIDRs = ['10.244.0.0/16', 'fd00:10:244::/56'];
    const allowedCIDRs = ['10.96.0.0/12', '203.0.113.0/24'];
    const objects = await render({ controller: { endpoints: { podCIDRs, allowedCIDRs } } });
    const args = controllerArgs(objects);
    expect(nonEmptyCidrList(args.get('pod-cidrs') ?? '')).toEqual(podCIDRs);
    expect(cidrList(args.get('allowed-endpoint-cidrs') ?? '')).toEqual(allowedCIDRs);
    expect(clusterRules(objects).flatMap((rule) => rule.resources)).not.toContain('nodes');
  });

  it.each([
    ['an address without a prefix length', { podCIDRs: ['10.244.0.0'] }],
    ['a host name', { allowedCIDRs: ['example.com/32'] }],
    ['a key the chart does not know', { serviceCIDRs: ['10.96.0.0/12'] }],
  ])('refuses %s at the schema', async (_, endpoints) => {
    await expect(render({ controller: { endpoints } })).rejects.toThrow(/controller\/endpoints/);
  });
});
