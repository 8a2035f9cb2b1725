import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

/** The Lease timing `haptic run` uses (docs/how-it-works.md: 15 s lease, 2 s retry). */
const leaseMs = 15_000;
const retryMs = 2_000;

beforeAll(async () => {
  site = await LocalSite.start('ctl-ha', { controllers: 2 });
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
  it('only the leader delivers; when the leader stops answering the other takes over within 20 s', async () => {
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
    // Frozen, not killed: a killed container restarts under the same identity and may renew
    // its own Lease; a frozen one renews nothing, as a leader cut off from the API server.
    await site.container(victim.name, 'controller', 'pause');
    await site.apply(ingress('beta'));
    await eventually(
      'served by the new leader',
      () => site.everywhere('web.example.com', '/', ['http']),
      all('200 beta /'),
      25_000,
    );
    const takeover = Date.now() - killed;
    expect(await holder()).not.toBe(leader);
    // The Lease expires, the other replica takes it at its next retry and delivers.
    expect(takeover).toBeLessThan(leaseMs + retryMs + 3_000);
    process.stdout.write(`leader takeover after the leader froze: ${takeover} ms\n`);
    // Thawed, the old leader finds the Lease taken and delivers nothing: beta stays served.
    await site.container(victim.name, 'controller', 'resume');
    await eventually(
      'the thawed replica reports it does not lead',
      async () =>
        (await (await fetch(`http://${victim.address}:9090/metrics`)).text()).match(
          /^haptic_leader (\d)/m,
        )?.[1],
      (value) => value === '0',
    );
    expect(await site.everywhere('web.example.com', '/', ['http'])).toEqual([
      '200 beta /',
      '200 beta /',
    ]);
  });

  it('a leader that stops releases the Lease, so another replica takes over at its next retry', async () => {
    const current = await holder();
    const other = site.controllers.find((c) => c.name !== current);
    if (other === undefined) throw new Error('replicas');
    const begun = Date.now();
    // A graceful stop (SIGTERM) as a rollout or a drain does it.
    const deleted = await kubectl(['delete', 'pod', current, '-n', site.namespace]);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    // Released as it stopped: the other replica leads at its next retry, well before the
    // 15 s Lease would have expired.
    await eventually('the other replica leads', holder, (name) => name === other.name, 25_000);
    const takeover = Date.now() - begun;
    expect(takeover).toBeLessThan(leaseMs - 3_000);
    await site.apply(ingress('alpha'));
    await eventually(
      'served',
      () => site.everywhere('web.example.com', '/', ['http']),
      all('200 alpha /'),
    );
    process.stdout.write(`leader takeover after a graceful stop: ${takeover} ms\n`);
  });
});
