/**
 * What an operator sees with kubectl, on the chart's release with two controller replicas:
 * `kubectl get ingress` shows the haptic-haproxy Service's address as ADDRESS of every served
 * Ingress (status.loadBalancer, written by the leader alone, removed when the Ingress is left
 * out), never on one that is not served; `kubectl describe ingress` lists the controller's
 * Events (it finds them by the Ingress's uid); `kubectl get htc` shows whether the
 * configuration runs, why not, and when it was last delivered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

beforeAll(async () => {
  site = await LocalSite.start('ctl-status', { controllers: 2 });
  await site.addBackend('alpha');
}, 240_000);

afterAll(async () => {
  await site.stop();
});

function route(host: string, path: string) {
  return {
    host,
    http: {
      paths: [
        { path, pathType: 'Prefix', backend: { service: { name: 'alpha', port: { number: 80 } } } },
      ],
    },
  };
}

async function get(args: readonly string[]): Promise<string> {
  const result = await kubectl([...args, '-n', site.namespace]);
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** The ADDRESS column of `kubectl get ingress <name>`. */
async function addressColumn(name: string): Promise<string> {
  const [header = '', row = ''] = (await get(['get', 'ingress', name])).split('\n');
  const start = header.indexOf('ADDRESS');
  return row.slice(start).split(/\s+/)[0] ?? '';
}

function statusIps(name: string): Promise<string> {
  return get(['get', 'ingress', name, '-o', 'jsonpath={.status.loadBalancer.ingress[*].ip}']);
}

/** Who wrote the Ingress's status, from its managedFields. */
async function statusWriters(name: string): Promise<string[]> {
  const object = JSON.parse(
    await get(['get', 'ingress', name, '-o', 'json', '--show-managed-fields']),
  ) as { metadata: { managedFields?: { manager: string; subresource?: string }[] } };
  return (object.metadata.managedFields ?? [])
    .filter((entry) => entry.subresource === 'status')
    .map((entry) => entry.manager);
}

describe('Ingress status and Events as kubectl shows them', () => {
  it("shows the haptic-haproxy Service's address as ADDRESS of a served Ingress, written by the leader alone", async () => {
    await site.apply(site.ingress('shop', [route('shop.example.com', '/')]));
    await eventually(
      'served',
      () => site.everywhere('shop.example.com', '/', ['http']),
      (answers) => answers.every((answer) => answer === '200 alpha /'),
    );
    const serviceIp = await get([
      'get',
      'service',
      'haptic-haproxy',
      '-o',
      'jsonpath={.spec.clusterIP}',
    ]);
    expect(serviceIp).toMatch(/^10\.96\./);
    // The local node has no cloud load balancer: the LoadBalancer Service's cluster IP stands in.
    await eventually(
      'ADDRESS',
      () => addressColumn('shop'),
      (address) => address === serviceIp,
    );
    const leader = await get([
      ...['get', 'lease', 'haptic-controller'],
      ...['-o', 'jsonpath={.spec.holderIdentity}'],
    ]);
    expect(site.controllers.map((controller) => controller.name)).toContain(leader);
    expect(await statusWriters('shop')).toEqual([leader]);
  });

  it('gives an Ingress that is left out no address, lists the reason in kubectl describe, and clears the address of one that stops being served', async () => {
    await site.apply(
      site.ingress('broken', [route('broken.example.com', '/x#\n  lua-load /tmp/x.lua')]),
    );
    const described = await eventually(
      'Event in kubectl describe',
      () => get(['describe', 'ingress', 'broken']),
      (text) => text.includes('IngressExcluded'),
    );
    expect(described).toMatch(/Events:\s+Type\s+Reason\s+Age\s+From\s+Message/);
    expect(described).toMatch(
      /Warning\s+IngressExcluded\s+.*haptic-controller\s+.*spec\.rules\[0\]\.http\.paths\[0\]\.path/,
    );
    expect(await statusIps('broken')).toBe('');
    expect(await addressColumn('shop')).not.toBe('');

    // The served Ingress gets the same bad path: it is left out, and loses its address.
    await site.apply(
      site.ingress('shop', [route('shop.example.com', '/x#\n  lua-load /tmp/x.lua')]),
    );
    await eventually(
      'address removed',
      () => statusIps('shop'),
      (ips) => ips === '',
    );
    expect(await get(['describe', 'ingress', 'shop'])).toContain('IngressExcluded');

    // Fixed, it is served again and shows the address again.
    await site.apply(site.ingress('shop', [route('shop.example.com', '/')]));
    await eventually(
      'address back',
      () => statusIps('shop'),
      (ips) => ips !== '',
    );
  });

  it('lists a warning about a served Ingress in kubectl describe, and publishes its address', async () => {
    await site.apply(
      site.ingress('secure', [route('secure.example.com', '/')], {
        tls: [{ hosts: ['secure.example.com'], secretName: 'not-there' }],
      }),
    );
    const described = await eventually(
      'Event in kubectl describe',
      () => get(['describe', 'ingress', 'secure']),
      (text) => text.includes('TLSSecretMissing'),
    );
    expect(described).toMatch(/Warning\s+TLSSecretMissing\s+/);
    await eventually(
      'address',
      () => statusIps('secure'),
      (ips) => ips !== '',
    );
  });

  it('leaves the address another controller wrote on an Ingress of another class', async () => {
    await site.apply({
      ...site.ingress('foreign', [route('foreign.example.com', '/')]),
      spec: { ingressClassName: 'someone-else', rules: [route('foreign.example.com', '/')] },
    });
    const patch = [
      { op: 'add', path: '/status/loadBalancer', value: { ingress: [{ ip: '192.0.2.99' }] } },
    ];
    await get([
      ...['patch', 'ingress', 'foreign', '--subresource=status', '--type=json'],
      ...['-p', JSON.stringify(patch)],
    ]);
    // A change the controller reconciles (served Ingresses must keep their address meanwhile).
    await site.apply(site.ingress('later', [route('later.example.com', '/')]));
    await eventually(
      'later served',
      () => statusIps('later'),
      (ips) => ips !== '',
    );
    expect(await statusIps('foreign')).toBe('192.0.2.99');
  });
});

interface ReadyStatus {
  readonly metadata: { readonly name: string; readonly generation: number };
  readonly status: {
    readonly conditions: readonly {
      readonly type: string;
      readonly status: string;
      readonly reason: string;
      readonly lastTransitionTime: string;
      readonly observedGeneration: number;
    }[];
    readonly lastDelivery?: { readonly digest: string; readonly time: string };
  };
}

async function templateConfig(): Promise<ReadyStatus> {
  const list = JSON.parse(await get(['get', 'htc', '-o', 'json'])) as { items: ReadyStatus[] };
  expect(list.items).toHaveLength(1);
  return list.items[0] as ReadyStatus;
}

function ready(config: ReadyStatus) {
  return config.status.conditions.find((condition) => condition.type === 'Ready');
}

describe('the HAProxyTemplateConfig as kubectl shows it', () => {
  it('shows Ready, Reason and Last Delivery; the transition time moves only when Ready flips', async () => {
    const first = await eventually(
      'Delivered',
      templateConfig,
      (config) => ready(config)?.reason === 'Delivered' && config.status.lastDelivery !== undefined,
    );
    const [header = '', row = ''] = (await get(['get', 'htc'])).split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['NAME', 'READY', 'REASON', 'LAST DELIVERY', 'AGE']);
    expect(row).toMatch(new RegExp(`^${first.metadata.name}\\s+True\\s+Delivered\\s+\\d+[smh]`));
    expect(await get(['get', 'htc', '-o', 'wide'])).toContain(
      'passed haproxy -c and runs on the agents',
    );
    expect(ready(first)?.observedGeneration).toBe(first.metadata.generation);
    const explained = await get(['explain', 'htc.status.conditions.lastTransitionTime']);
    expect(explained).toContain('When the status last changed');

    // A new configuration (stamps have whole seconds): a new lastDelivery, the same transition.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await site.apply(site.ingress('another', [route('another.example.com', '/')]));
    const redelivered = await eventually(
      'delivered again',
      templateConfig,
      (config) => config.status.lastDelivery?.digest !== first.status.lastDelivery?.digest,
    );
    expect(ready(redelivered)?.status).toBe('True');
    expect(ready(redelivered)?.lastTransitionTime).toBe(ready(first)?.lastTransitionTime);
    expect(Date.parse(redelivered.status.lastDelivery?.time ?? '')).toBeGreaterThan(
      Date.parse(first.status.lastDelivery?.time ?? ''),
    );

    // A template that does not parse: Ready flips with the new generation; the last delivery stays.
    const name = first.metadata.name;
    const broken = [{ op: 'replace', path: '/spec/haproxyConfig/template', value: '{% if %}' }];
    const original = JSON.parse(await get(['get', 'htc', name, '-o', 'json'])) as {
      spec: { haproxyConfig: { template: string } };
    };
    await get(['patch', 'htc', name, '--type=json', '-p', JSON.stringify(broken)]);
    const failed = await eventually(
      'not Ready',
      templateConfig,
      (config) => ready(config)?.status === 'False',
    );
    expect(ready(failed)).toMatchObject({
      reason: 'TemplateConfigInvalid',
      observedGeneration: failed.metadata.generation,
    });
    expect(failed.metadata.generation).toBeGreaterThan(first.metadata.generation);
    expect(ready(failed)?.lastTransitionTime).not.toBe(ready(first)?.lastTransitionTime);
    expect(failed.status.lastDelivery).toEqual(redelivered.status.lastDelivery);
    expect((await get(['get', 'htc'])).split('\n')[1]).toMatch(/\sFalse\s+TemplateConfigInvalid\s/);

    const restore = [
      {
        op: 'replace',
        path: '/spec/haproxyConfig/template',
        value: original.spec.haproxyConfig.template,
      },
    ];
    await get(['patch', 'htc', name, '--type=json', '-p', JSON.stringify(restore)]);
    await eventually('Ready again', templateConfig, (config) => ready(config)?.status === 'True');
  });
});
