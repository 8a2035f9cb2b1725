import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

beforeAll(async () => {
  site = await LocalSite.start('ctl-ha', 2);
  await site.addBackend('alpha');
  await site.addBackend('beta');
}, 180_000);

afterAll(async () => {
  await site.stop();
});

async function holder(): Promise<string> {
  const lease = await kubectl([
    'get',
    'lease',
    'haptic-controller',
    '-n',
    site.namespace,
    '-o',
    'jsonpath={.spec.holderIdentity}',
  ]);
  return lease.stdout;
}

function ingress(service: string) {
  return site.ingress('web', [
    {
      host: 'web.example.com',
      http: {
        paths: [
          {
            path: '/',
            pathType: 'Prefix',
            backend: { service: { name: service, port: { number: 80 } } },
          },
        ],
      },
    },
  ]);
}

const all = (value: string) => (answers: string[]) => answers.every((answer) => answer === value);

describe('leader election with two controller replicas', () => {
  it('only the leader delivers; after the leader is killed the other takes over within 20 s', async () => {
    const leader = await eventually('a leader', holder, (name) =>
      name.startsWith('haptic-controller-'),
    );
    await site.apply(ingress('alpha'));
    await eventually(
      'served',
      () => site.everywhere('web.example.com', '/', ['http']),
      all('200 alpha /'),
    );
    const metrics = await Promise.all(
      site.controllers.map(
        async (c) =>
          (await (await fetch(`http://${c.address}:9090/metrics`)).text()).match(
            /^haptic_leader (\d)/m,
          )?.[1],
      ),
    );
    expect(metrics.sort()).toEqual(['0', '1']);

    const victim = site.controllers.find((c) => c.name === leader);
    if (victim === undefined) throw new Error(`no controller named ${leader}`);
    const killed = Date.now();
    await victim.pod.killContainer('controller');
    await site.apply(ingress('beta'));
    await eventually(
      'served by the new leader',
      () => site.everywhere('web.example.com', '/', ['http']),
      all('200 beta /'),
      25_000,
    );
    const takeover = Date.now() - killed;
    expect(await holder()).not.toBe(leader);
    expect(takeover).toBeLessThan(20_000);
    process.stdout.write(`leader takeover after SIGKILL: ${takeover} ms\n`);
  });

  it('a leader that stops releases the Lease, so another replica takes over at its next retry', async () => {
    const current = await holder();
    const restarted = site.controllers.find((c) => c.name !== current);
    const leading = site.controllers.find((c) => c.name === current);
    if (restarted === undefined || leading === undefined) throw new Error('replicas');
    await restarted.start();
    const begun = Date.now();
    await leading.stop();
    // Released as it stopped: the Lease no longer names the stopped replica.
    expect(await holder()).not.toBe(leading.name);
    await eventually(
      'the restarted replica leads',
      holder,
      (name) => name === restarted.name,
      25_000,
    );
    const takeover = Date.now() - begun;
    await site.apply(ingress('alpha'));
    await eventually(
      'served',
      () => site.everywhere('web.example.com', '/', ['http']),
      all('200 alpha /'),
    );
    process.stdout.write(`leader takeover after a graceful stop: ${takeover} ms\n`);
  });
});
