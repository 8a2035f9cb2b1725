/**
 * Endpoint changes without reloads, on two real agent + HAProxy replicas over real mTLS: a
 * set that differs from the applied one only in server slots is applied through HAProxy's
 * runtime API (no reload, no new process), traffic follows at once, and the files on disk
 * are the set sent, so a restart serves the same. Anything else reloads, and a runtime
 * update HAProxy does not take falls back to a reload. The compact operation
 * (`POST /v1/runtime-change`: the slots and the digests of both sets) does the same without
 * the files, and refuses, changing nothing, a base or a result that is not the agent's.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { digestOf } from '../../../src/agent-api/apply-request.ts';
import { fileSetDigest } from '../../../src/agent-api/file-set-digest.ts';
import { runtimePlan } from '../../../src/haproxy/runtime-changes.ts';
import { MasterSocket } from '../../../src/agent/master-socket.ts';
import { parseProcessList } from '../../../src/agent/process-list.ts';
import { AgentClient, type AgentEndpoint } from '../../../src/controller/delivery/agent-client.ts';
import {
  AgentDelivery,
  type DeliveryRound,
  type DesiredConfig,
  desiredConfig,
} from '../../../src/controller/delivery/agent-delivery.ts';
import type { AgentDiscovery } from '../../../src/controller/delivery/agent-discovery.ts';
import { ControllerMetrics } from '../../../src/controller/status/controller-metrics.ts';
import {
  type AgentApplyResult,
  applyToAgents,
  callAgents,
} from '../../../src/controller/delivery/agent-fanout.ts';
import { TlsMaterialWatcher } from '../../../src/tls/material-watcher.ts';
import { Replica } from './replica.ts';
import { identitySecret, specMaterial } from './test-pki.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-runtime-'));
const replicas: Replica[] = [];
const upstreams: Server[] = [];
const upstreamPorts: number[] = [];
let watcher: TlsMaterialWatcher | undefined;
let client: AgentClient;

/** A server slot line as the default template writes it: an upstream, or spare. */
type Slot = number | 'spare';

function config(slots: readonly Slot[], extra = ''): string {
  const lines = slots.map((slot, i) =>
    slot === 'spare'
      ? `  server s${i + 1} 127.0.0.1:1 disabled`
      : `  server s${i + 1} 127.0.0.1:${upstreamPorts[slot] ?? 0}`,
  );
  return `global
  default-path config

defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s

frontend web
  bind "\${HAPTIC_LISTEN_ADDRESS}:8080"
  default_backend team:web:80

backend team:web:80
  balance roundrobin
  http-error status 503 content-type text/plain string "no endpoints"
${lines.join('\n')}
${extra}`;
}

async function apply(text: string): Promise<AgentApplyResult[]> {
  const results = await applyToAgents(
    client,
    replicas.map((replica) => replica.endpoint()),
    encodeApply([{ path: 'haproxy.cfg', content: Buffer.from(text) }]),
  );
  return [...results];
}

function responses(results: readonly AgentApplyResult[]) {
  return results.map((result) => {
    if (!result.ok) throw new Error(result.error.message);
    return result.response;
  });
}

/** The bodies of `count` requests through a replica (roundrobin visits every server). */
async function answers(replica: Replica, count = 8): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < count; i += 1) {
    seen.add(
      await new Promise<string>((resolve, reject) => {
        const call = request(
          { host: replica.address, port: replica.httpPort, path: '/', agent: false },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => {
              resolve(`${response.statusCode ?? 0} ${Buffer.concat(chunks).toString()}`);
            });
          },
        );
        call.on('error', reject);
        call.end();
      }),
    );
  }
  return seen;
}

/** HAProxy's reload count and process count, from its master socket. */
async function processes(replica: Replica): Promise<{ reloads: number; processes: number }> {
  const list = parseProcessList(await new MasterSocket(replica.masterSocket).command('show proc'));
  if (list === undefined) throw new Error(`no process list from ${replica.name}`);
  return {
    reloads: list.master.reloads,
    processes: 1 + list.workers.length + list.oldWorkers.length,
  };
}

/** The haproxy.cfg a replica's agent holds. */
function fileOf(replica: Replica): string {
  return readFileSync(join(replica.baseDir, 'haproxy.cfg'), 'utf8');
}

beforeAll(async () => {
  for (const name of ['a', 'b']) {
    const server = createServer((_, response) => {
      response.end(`upstream ${name}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    upstreams.push(server);
    upstreamPorts.push(address.port);
  }
  const material = await specMaterial('haptic-agent', 'haptic-controller');
  for (const [index, address] of ['127.0.21.1', '127.0.21.2'].entries()) {
    const replica = await Replica.create(root, `haproxy-${index}`, address, {
      clientName: 'haptic-controller',
    });
    replicas.push(replica);
    await writeAtomicProjection(replica.tlsDir, identitySecret(material.agent, [material.ca]));
    await replica.startAgent();
    await replica.startHAProxy();
  }
  const controllerDir = join(root, 'controller-tls');
  await writeAtomicProjection(controllerDir, identitySecret(material.controller, [material.ca]));
  watcher = await TlsMaterialWatcher.start({
    dir: controllerDir,
    logger: pino({ level: 'silent' }),
  });
  client = new AgentClient({ mode: 'mtls', material: watcher, serverName: 'haptic-agent' });
});

afterAll(async () => {
  client.close();
  watcher?.close();
  await Promise.all(replicas.map((replica) => replica.stop()));
  for (const server of upstreams) server.close();
  rmSync(root, { recursive: true, force: true });
});

describe('endpoint changes through the runtime API', () => {
  it('reloads for the first configuration, which serves one upstream', async () => {
    for (const response of responses(await apply(config([0, 'spare', 'spare', 'spare'])))) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
    }
    for (const replica of replicas)
      expect(await answers(replica)).toEqual(new Set(['200 upstream a']));
  });

  it('fills a spare slot without a reload or a new process, and traffic reaches it', async () => {
    const before = await Promise.all(replicas.map(processes));
    const next = config([0, 'spare', 1, 'spare']);
    for (const response of responses(await apply(next))) {
      expect(response).toMatchObject({ changed: true, reloaded: false, runtimeChanges: 1 });
    }
    for (const [i, replica] of replicas.entries()) {
      expect(await answers(replica)).toEqual(new Set(['200 upstream a', '200 upstream b']));
      expect(await processes(replica)).toEqual(before[i]);
      expect(fileOf(replica)).toBe(next);
    }
  });

  it('empties a slot without a reload, and the restarted HAProxy serves what the files say', async () => {
    const before = await Promise.all(replicas.map(processes));
    for (const response of responses(await apply(config(['spare', 'spare', 1, 'spare'])))) {
      expect(response).toMatchObject({ reloaded: false, runtimeChanges: 1 });
    }
    for (const [i, replica] of replicas.entries()) {
      expect(await answers(replica)).toEqual(new Set(['200 upstream b']));
      expect(await processes(replica)).toEqual(before[i]);
    }
    const [first] = replicas;
    if (first === undefined) throw new Error('no replica');
    await first.stop();
    await first.startAgent();
    await first.startHAProxy();
    expect(await answers(first)).toEqual(new Set(['200 upstream b']));
  });

  it('answers 503 from the template once every slot is spare, still without a reload', async () => {
    for (const response of responses(await apply(config(['spare', 'spare', 'spare', 'spare'])))) {
      expect(response).toMatchObject({ reloaded: false, runtimeChanges: 1 });
    }
    for (const replica of replicas)
      expect(await answers(replica, 2)).toEqual(new Set(['503 no endpoints']));
  });

  it('reloads for a change that is not a server slot', async () => {
    for (const response of responses(
      await apply(config([0, 'spare', 'spare', 'spare', 'spare'])),
    )) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
      expect(response.runtimeChanges ?? 0).toBe(0);
    }
    for (const replica of replicas)
      expect(await answers(replica)).toEqual(new Set(['200 upstream a']));
  });

  it('reloads, never compares as text, a haproxy.cfg whose bytes are not UTF-8', async () => {
    // Two files that differ only in bytes UTF-8 cannot read (0xC0, then U+FFFD written out):
    // read as text both lines are the same, and the second was written without a reload.
    const withBytes = (bytes: Buffer) =>
      Buffer.concat([
        Buffer.from(`${config([0, 'spare', 'spare', 'spare'])}\n# `),
        bytes,
        Buffer.from('\n'),
      ]);
    const send = async (content: Buffer) =>
      responses(
        await applyToAgents(
          client,
          replicas.map((replica) => replica.endpoint()),
          encodeApply([{ path: 'haproxy.cfg', content }]),
        ),
      );
    for (const response of await send(withBytes(Buffer.from([0xc0])))) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
    }
    for (const response of await send(withBytes(Buffer.from('\ufffd')))) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
    }
  });

  it('falls back to a reload when HAProxy does not take the runtime update', async () => {
    // A slot of a disabled backend: the files allow the change, the running worker refuses
    // it ("Proxy is disabled.").
    const hidden = (slot: Slot): string =>
      config(
        [0, 'spare', 'spare', 'spare', 'spare'],
        `
backend hidden
  disabled
${slot === 'spare' ? '  server s1 127.0.0.1:1 disabled' : `  server s1 127.0.0.1:${upstreamPorts[slot] ?? 0}`}
`,
      );
    for (const response of responses(await apply(hidden('spare')))) {
      expect(response).toMatchObject({ reloaded: true });
    }
    const next = hidden(1);
    for (const response of responses(await apply(next))) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
    }
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(next);
      expect(await answers(replica)).toEqual(new Set(['200 upstream a']));
      expect(replica.agentLogText()).toContain('the runtime update failed');
    }
  });
});

/** The digest of a set holding only `text` as haproxy.cfg, as the agents compute it. */
function setDigest(text: string): string {
  return fileSetDigest([{ path: 'haproxy.cfg', digest: digestOf(Buffer.from(text)) }]);
}

/** The compact request from `from` to `to` (slots by runtimePlan, as the controller derives them). */
function runtimeChange(from: string, to: string, resultDigest = setDigest(to)): Buffer {
  const set = (text: string) => ({
    files: [{ path: 'haproxy.cfg', digest: digestOf(Buffer.from(text)) }],
    config: text,
  });
  const plan = runtimePlan(set(from), set(to));
  if (!plan.runtime) throw new Error(plan.reason);
  return Buffer.from(
    JSON.stringify({ baseDigest: setDigest(from), resultDigest, changes: plan.changes }),
  );
}

async function sendChange(body: Buffer): Promise<AgentApplyResult[]> {
  const results = await callAgents(
    (endpoint, options) => client.runtimeChange(endpoint, body, options),
    replicas.map((replica) => replica.endpoint()),
  );
  return [...results];
}

async function generations(): Promise<number[]> {
  return Promise.all(
    replicas.map(async (replica) => {
      const state = await client.state(replica.endpoint());
      if (!state.ok) throw new Error(state.error.message);
      return state.value.generation;
    }),
  );
}

describe('the runtime-change operation (slots and digests only)', () => {
  const from = (): string => config([0, 'spare', 'spare', 'spare']);
  const to = (): string => config([0, 'spare', 1, 'spare']);

  it('fills a slot without a reload or a new process, and the files equal the complete set', async () => {
    for (const response of responses(await apply(from()))) {
      expect(response).toMatchObject({ changed: true });
    }
    const before = await Promise.all(replicas.map(processes));
    const generation = await generations();
    for (const response of responses(await sendChange(runtimeChange(from(), to())))) {
      expect(response).toMatchObject({
        changed: true,
        reloaded: false,
        runtimeChanges: 1,
        configDigest: digestOf(Buffer.from(to())),
      });
    }
    expect(await generations()).toEqual(generation.map((value) => value + 1));
    for (const [i, replica] of replicas.entries()) {
      expect(fileOf(replica)).toBe(to());
      expect(await answers(replica)).toEqual(new Set(['200 upstream a', '200 upstream b']));
      expect(await processes(replica)).toEqual(before[i]);
    }
    // The complete set is what the agents hold already: nothing to do.
    for (const response of responses(await apply(to()))) {
      expect(response).toMatchObject({ changed: false, reloaded: false });
    }
  });

  it('refuses a base that is not the set the agent holds, changing nothing', async () => {
    const generation = await generations();
    const results = await sendChange(
      runtimeChange(from(), config(['spare', 'spare', 'spare', 'spare'])),
    );
    for (const result of results) {
      expect(result).toMatchObject({
        ok: false,
        error: { kind: 'http', status: 409, reason: 'RuntimeBaseMismatch', retryable: false },
      });
      expect(result.ok ? '' : result.error.message).toMatch(
        /baseDigest sha256:[0-9a-f]{64} is not the set this agent holds .*POST \/v1\/apply\. Nothing was changed\./,
      );
    }
    expect(await generations()).toEqual(generation);
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(to());
    }
  });

  it('refuses a change whose result is not the set named, changing nothing on disk or in HAProxy', async () => {
    const generation = await generations();
    const emptied = config(['spare', 'spare', 1, 'spare']);
    const results = await sendChange(runtimeChange(to(), emptied, setDigest(`${emptied}\n`)));
    for (const result of results) {
      expect(result).toMatchObject({
        ok: false,
        error: { status: 409, reason: 'RuntimeResultMismatch' },
      });
      expect(result.ok ? '' : result.error.message).toMatch(/not resultDigest/);
    }
    expect(await generations()).toEqual(generation);
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(to());
      expect(await answers(replica)).toEqual(new Set(['200 upstream a', '200 upstream b']));
    }
  });

  it('refuses a slot the configuration does not have as not runtime-expressible', async () => {
    const body = JSON.stringify({
      baseDigest: setDigest(to()),
      resultDigest: setDigest(to()),
      changes: [
        { backend: 'team:web:80', server: 's9', address: '127.0.0.1', port: 1, state: 'maint' },
      ],
    });
    for (const result of await sendChange(Buffer.from(body))) {
      expect(result).toMatchObject({
        ok: false,
        error: { status: 409, reason: 'RuntimeNotExpressible' },
      });
      expect(result.ok ? '' : result.error.message).toMatch(/not one server line/);
    }
  });

  it('refuses as HAProxyUnavailable, the files as before, while HAProxy is down; applies once it is back', async () => {
    const [down, up] = replicas;
    if (down === undefined || up === undefined) throw new Error('two replicas expected');
    const [generation] = await generations();
    await down.stopHAProxy();
    try {
      const result = await client.runtimeChange(down.endpoint(), runtimeChange(to(), from()));
      expect(result).toMatchObject({
        ok: false,
        error: { status: 503, reason: 'HAProxyUnavailable', retryable: true },
      });
      expect(result.ok ? '' : result.error.message).toMatch(/Nothing was changed\.$/);
      expect(fileOf(down)).toBe(to());
      expect((await generations())[0]).toBe(generation);
    } finally {
      await down.startHAProxy();
    }
    // Restarted from the files, it serves the set the agent holds, which takes the change.
    expect(await answers(down)).toEqual(new Set(['200 upstream a', '200 upstream b']));
    for (const response of responses(await sendChange(runtimeChange(to(), from())))) {
      expect(response).toMatchObject({ changed: true, reloaded: false, runtimeChanges: 1 });
    }
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(from());
      expect(await answers(replica)).toEqual(new Set(['200 upstream a']));
    }
  });

  it('falls back to a reload of the complete set when HAProxy does not take the change', async () => {
    const hidden = (slot: Slot): string =>
      config(
        [0, 'spare', 'spare', 'spare'],
        `
backend hidden
  disabled
${slot === 'spare' ? '  server s1 127.0.0.1:1 disabled' : `  server s1 127.0.0.1:${upstreamPorts[slot] ?? 0}`}
`,
      );
    for (const response of responses(await apply(hidden('spare')))) {
      expect(response).toMatchObject({ reloaded: true });
    }
    for (const response of responses(await sendChange(runtimeChange(hidden('spare'), hidden(1))))) {
      expect(response).toMatchObject({ changed: true, reloaded: true });
    }
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(hidden(1));
      expect(await answers(replica)).toEqual(new Set(['200 upstream a']));
    }
    for (const response of responses(await apply(hidden(1)))) {
      expect(response).toMatchObject({ changed: false });
    }
  });
});

/** Discovery that lists what `endpoints` returns at each call. */
function listing(endpoints: () => readonly AgentEndpoint[]): AgentDiscovery {
  return { endpoints, start: () => Promise.resolve(), stop: () => Promise.resolve() };
}

/** A desired configuration of haproxy.cfg alone. */
function desiredSet(text: string): DesiredConfig {
  const content = Buffer.from(text);
  return desiredConfig([{ path: 'haproxy.cfg', content }], digestOf(content));
}

describe("the controller's delivery", () => {
  it('sends the slots to an agent on the previous set, and the complete set to one that refuses', async () => {
    const metrics = new ControllerMetrics();
    const endpoints = replicas.map((replica) => replica.endpoint());
    const delivery = new AgentDelivery({
      client,
      discovery: listing(() => endpoints),
      metrics,
      logger: pino({ level: 'silent' }),
    });
    const desire = (text: string): void => {
      delivery.setDesired(desiredSet(text));
    };
    const requests = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (
          (await metrics.registry.getSingleMetric('haptic_runtime_change_requests_total')?.get())
            ?.values ?? []
        ).map((sample) => [
          `${sample.labels.agent ?? ''} ${sample.labels.result ?? ''}`,
          sample.value,
        ]),
      );
    desire(config([0, 'spare', 'spare', 'spare']));
    for (const result of (await delivery.deliver()).results) expect(result.ok).toBe(true);
    // The second replica is moved to another set behind the delivery's back.
    const [first, second] = replicas;
    if (first === undefined || second === undefined) throw new Error('two replicas');
    const [moved] = await applyToAgents(
      client,
      [second.endpoint()],
      encodeApply([
        { path: 'haproxy.cfg', content: Buffer.from(config([1, 'spare', 'spare', 'spare'])) },
      ]),
    );
    expect(moved?.ok).toBe(true);
    const next = config([0, 'spare', 1, 'spare']);
    desire(next);
    const { results } = await delivery.deliver();
    for (const result of results) {
      expect(result).toMatchObject({ ok: true, response: { changed: true, reloaded: false } });
    }
    expect(await requests()).toEqual({
      [`${first.name} applied`]: 1,
      [`${second.name} RuntimeBaseMismatch`]: 1,
    });
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(next);
      expect(await answers(replica)).toEqual(new Set(['200 upstream a', '200 upstream b']));
    }
  });

  it('passes over a stopped agent: the other takes each new set at once, the stopped one the newest once it answers', async () => {
    const [first, second] = replicas;
    if (first === undefined || second === undefined) throw new Error('two replicas');
    let freed = 0;
    const delivery = new AgentDelivery({
      client,
      discovery: listing(() => replicas.map((replica) => replica.endpoint())),
      metrics: new ControllerMetrics(),
      logger: pino({ level: 'silent' }),
      fanOut: { attempts: 1, timeoutMs: 120_000 },
      onAgentFree: () => {
        freed += 1;
      },
    });
    delivery.setDesired(desiredSet(config([0, 'spare', 'spare', 'spare'])));
    for (const result of (await delivery.deliver()).results) expect(result.ok).toBe(true);

    const both = config([0, 1, 'spare', 'spare']);
    const newest = config([1, 'spare', 'spare', 'spare']);
    first.signalAgent('SIGSTOP');
    let stoppedRound: Promise<DeliveryRound> | undefined;
    let stoppedRoundEnded = false;
    try {
      delivery.setDesired(desiredSet(both));
      stoppedRound = delivery.deliver().finally(() => {
        stoppedRoundEnded = true;
      });
      await eventually(
        'the running agent takes the set',
        () => Promise.resolve(fileOf(second)),
        (text) => text === both,
      );
      delivery.setDesired(desiredSet(newest));
      const next = await delivery.deliver();
      expect(stoppedRoundEnded).toBe(false);
      expect(next.waiting.map((endpoint) => endpoint.name)).toEqual([first.name]);
      expect(next.results.map((result) => [result.endpoint.name, result.ok])).toEqual([
        [second.name, true],
      ]);
      expect(fileOf(second)).toBe(newest);
      expect(freed).toBe(0);
    } finally {
      first.signalAgent('SIGCONT');
    }
    // Continued, the agent answers the call it was stopped in, and the delivery hears of it.
    const stopped = await stoppedRound;
    expect(stopped.results.map((result) => [result.endpoint.name, result.ok])).toEqual([
      [first.name, true],
      [second.name, true],
    ]);
    expect(freed).toBe(1);
    expect(fileOf(first)).toBe(both);
    const caughtUp = await delivery.deliver();
    expect(caughtUp.waiting).toEqual([]);
    expect(caughtUp.results.map((result) => [result.endpoint.name, result.ok])).toEqual([
      [first.name, true],
    ]);
    for (const replica of replicas) {
      expect(fileOf(replica)).toBe(newest);
      expect(await answers(replica)).toEqual(new Set(['200 upstream b']));
    }
  });

  it('withdraws the call to an agent that left discovery: no timeout, no failed delivery, and it is delivered to again once listed', async () => {
    const [first, second] = replicas;
    if (first === undefined || second === undefined) throw new Error('two replicas');
    const metrics = new ControllerMetrics();
    let listed = replicas.map((replica) => replica.endpoint());
    const delivery = new AgentDelivery({
      client,
      discovery: listing(() => listed),
      metrics,
      logger: pino({ level: 'silent' }),
      fanOut: { attempts: 3, timeoutMs: 120_000 },
    });
    const text = config([0, 'spare', 1, 1]);
    delivery.setDesired(desiredSet(text));
    first.signalAgent('SIGSTOP');
    let round: Promise<DeliveryRound> | undefined;
    try {
      round = delivery.deliver();
      await eventually(
        'the running agent takes the set',
        () => Promise.resolve(fileOf(second)),
        (file) => file === text,
      );
      // The stopped agent's Pod is deleted: discovery lists the other one only.
      listed = [second.endpoint()];
      const started = Date.now();
      await delivery.sync();
      const { results } = await round;
      // Withdrawn at once, long before the attempt's deadline (120 s) or its retries.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(
        results.map((result) => [
          result.endpoint.name,
          result.ok ? 'applied' : result.error.kind,
          result.attempts,
        ]),
      ).toEqual([
        [first.name, 'withdrawn', 1],
        [second.name, 'applied', 1],
      ]);
    } finally {
      first.signalAgent('SIGCONT');
    }
    const deliveries = (
      (await metrics.registry.getSingleMetric('haptic_deliveries_total')?.get())?.values ?? []
    ).map((sample) => `${sample.labels.agent ?? ''} ${sample.labels.result ?? ''}`);
    expect(deliveries).toEqual([`${second.name} applied`]);
    // Listed again, it is not taken for confirmed: the next delivery brings it up to date.
    listed = replicas.map((replica) => replica.endpoint());
    const again = await delivery.deliver();
    expect(again.results.map((result) => [result.endpoint.name, result.ok])).toEqual([
      [first.name, true],
    ]);
    expect(fileOf(first)).toBe(text);
  });
});
