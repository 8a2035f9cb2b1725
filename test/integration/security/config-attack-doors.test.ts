/**
 * Every attack of test/support/config-attacks.ts through every door of a running release
 * (the chart installed on the node with its webhook registered, the controller and two
 * haptic-haproxy replicas as Pods of the product image, with their agents, config-check
 * sandboxes and real HAProxy; the lint and `haptic config check` are the corpus test's):
 *
 * - the HAProxyTemplateConfig: written through the API server, the registered webhook denies
 *   it with keyword and line; past admission (no webhook asked), Ready=False LintFailed naming
 *   the keyword and line, an Event saying so, nothing delivered, the agents keep serving;
 * - an Ingress: the payload in a `haproxy-haptic.org/*` annotation that the template places on
 *   a line of its own → denied at admission naming the annotation; past admission, the
 *   Ingress left out (Event naming the annotation and the refused keyword), never delivered;
 * - the webhook: an unauthenticated POST to a controller Pod reviewing the configured
 *   HAProxyTemplateConfig with the payload → denied with keyword and line; under a foreign
 *   name → allowed unread;
 * - an agent: the payload POSTed to /v1/apply with the controller's own client certificate →
 *   422 ConfigForbidden with keyword and line, HAProxy not reloaded.
 *
 * Lua payloads write a marker file when HAProxy loads them: controls feed the same lines to
 * plain `haproxy -c` (as the sandbox's user) and see the marker appear; after every door, and
 * at the end, no other marker exists. The marker and secret paths the attacks name exist in
 * every container of the release's Pods as on the host (attack-root.ts); preconditions show
 * that a marker each container writes, and one from Lua run by each Pod's sandbox and serving
 * HAProxy, is found, so no payload could fail for want of a path.
 * No answer, status, Event or log carries the content of the secret file the attacks name.
 */
import { chmodSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentStateBody } from '../../../src/agent-api/api-types.ts';
import { encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { defaultCheckSocket, sandboxPaths } from '../../../src/sandbox/sandbox-protocol.ts';
import { isProblem, templateAnnotations } from '../../../src/validation/ingress-checks.ts';
import { rawRequest } from '../agent/raw-request.ts';
import { LocalSite, type SitePod } from '../controller/local-site.ts';
import { eventually } from '../../support/eventually.ts';
import { kubectl } from '../../support/cluster.ts';
import {
  type ConfigAttack,
  attackSecret,
  configAttacks,
  corpusConfig,
  luaMarkerScript,
  outsideFiles,
  refusalText,
  slug,
} from '../../support/config-attacks.ts';
import { plainHaproxyCheck } from '../../support/plain-haproxy-check.ts';
import {
  type ReviewTarget,
  admissionReview,
  postUnauthenticatedReview,
} from '../../support/unauthenticated-review.ts';
import { AttackRoot } from './attack-root.ts';
import { ChartWebhook } from './chart-webhook.ts';

const root = new AttackRoot();
const attacks = configAttacks(root.outside);
const luaAttacks = attacks.filter((attack) => attack.runsLua === true);

/** Passes the lint; HAProxy reads the secret and rejects it, and only a reduced line is told. */
const inDirectorySecret = {
  name: 'a pattern file inside the directory holding a secret',
  frontend: ['  acl x src -f files/secret.txt'],
  files: { 'files/secret.txt': `${attackSecret}\n` },
} as const;
/** The reduced alert for it, at the line of the `acl`. */
const invalidAcl = (line: number): string =>
  `[ALERT] haproxy.cfg:${String(line)}: 'acl' has an invalid ACL`;

const marker = (door: string, name: string): string => root.marker(door, name);
const ran = (door: string, name: string): boolean => root.ran(door, name);

let site: LocalSite;
/** The Pods whose /tmp volumes hold the root's copies (a replaced Pod would have none). */
let watchedPods: readonly SitePod[];
/** The chart's webhook registration, and its webhook reached at a controller Pod IP. */
let registration: ChartWebhook;
let webhook: ReviewTarget;
let installed: TemplateSpec;
/** The controller's client identity (its agent-tls Secret): what the controller presents. */
let controllerIdentity: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer };

interface TemplateSpec extends Record<string, unknown> {
  readonly haproxyConfig: { readonly template: string };
}

/**
 * `lines` with the global lines added after the global section's last line and the frontend
 * lines after `frontend http` (before any Liquid tag of the chart's template, so a line of the
 * template is the same line of the rendered configuration), and the number of the first one.
 */
function withLines(
  text: string,
  global: readonly string[],
  frontend: readonly string[],
): { readonly text: string; readonly firstAddedLine: number } {
  const lines = text.split('\n');
  let globalEnd = lines.indexOf('defaults') - 1;
  while (globalEnd > 0 && lines[globalEnd]?.trim() === '') globalEnd -= 1;
  const frontendAt = lines.indexOf('frontend http');
  if (globalEnd <= 0 || frontendAt <= globalEnd) throw new Error('unexpected template layout');
  const added = [
    ...lines.slice(0, globalEnd + 1),
    ...global,
    ...lines.slice(globalEnd + 1, frontendAt + 1),
    ...frontend,
    ...lines.slice(frontendAt + 1),
  ];
  const firstAddedLine = global.length > 0 ? globalEnd + 2 : frontendAt + 2 + global.length;
  return { text: added.join('\n'), firstAddedLine };
}

/** Files of an attack as a HAProxyTemplateConfig declares them (files/, ssl/ crt-lists). */
function templateFiles(files: Readonly<Record<string, string>>, luaMarker: string) {
  const sections: Record<'files' | 'certificateLists', Record<string, { template: string }>> = {
    files: { 'x.lua': { template: luaMarkerScript(luaMarker) } },
    certificateLists: {},
  };
  for (const [path, content] of Object.entries(files)) {
    const [dir, name = ''] = path.split('/');
    const section = dir === 'ssl' ? sections.certificateLists : sections.files;
    section[name] = { template: content };
  }
  return sections;
}

/** The installed spec with the attack's lines in the template and its files beside it. */
function attackSpec(
  attack: Pick<ConfigAttack, 'global' | 'frontend' | 'files'>,
  luaMarker: string,
): { readonly spec: TemplateSpec; readonly firstAddedLine: number } {
  const { text, firstAddedLine } = withLines(
    installed.haproxyConfig.template,
    attack.global ?? [],
    attack.frontend ?? [],
  );
  const files = templateFiles(attack.files ?? {}, luaMarker);
  const certificateLists = {
    ...(installed.certificateLists as Record<string, unknown>),
    ...files.certificateLists,
  };
  return {
    spec: { ...installed, haproxyConfig: { template: text }, files: files.files, certificateLists },
    firstAddedLine,
  };
}

async function getJson<T>(args: readonly string[]): Promise<T> {
  const result = await kubectl([...args, '-n', site.namespace, '-o', 'json']);
  if (result.exitCode !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as T;
}

interface Ready {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
}

async function readyCondition(): Promise<Ready> {
  const object = await getJson<{ status?: { conditions?: Ready[] } }>([
    'get',
    'haproxytemplateconfig',
    'haptic',
  ]);
  const [ready] = object.status?.conditions ?? [];
  if (ready === undefined) throw new Error('no condition yet');
  return ready;
}

/** Replaces the whole spec (or only asks whether the API server would, `dryRun`). */
function patchSpec(spec: TemplateSpec, dryRun = false) {
  const patch = [{ op: 'replace', path: '/spec', value: spec }];
  return kubectl([
    ...['patch', 'haproxytemplateconfig', 'haptic', '-n', site.namespace],
    ...['--type=json', '-p', JSON.stringify(patch), '-o', 'jsonpath={.metadata.generation}'],
    ...(dryRun ? ['--dry-run=server'] : []),
  ]);
}

/** Replaces the whole spec; the new generation. */
async function putSpec(spec: TemplateSpec): Promise<number> {
  const result = await patchSpec(spec);
  if (result.exitCode !== 0) throw new Error(result.stderr);
  return Number(result.stdout);
}

/** The generation of the HAProxyTemplateConfig as stored. */
async function storedGeneration(): Promise<number> {
  return (
    await getJson<{ metadata: { generation: number } }>(['get', 'haproxytemplateconfig', 'haptic'])
  ).metadata.generation;
}

/** The corpus configuration with the attack, its files and the Lua payload, as an apply. */
function bundle(attack: Pick<ConfigAttack, 'global' | 'frontend' | 'files'>, luaMarker: string) {
  const { config, firstAddedLine } = corpusConfig(attack);
  const files = [
    { path: 'haproxy.cfg', content: Buffer.from(config) },
    { path: 'files/x.lua', content: Buffer.from(luaMarkerScript(luaMarker)) },
    ...Object.entries(attack.files ?? {}).map(([path, content]) => ({
      path,
      content: Buffer.from(content),
    })),
  ];
  return { files, firstAddedLine };
}

/** What the API server answers when the registered webhook denies a write. */
const deniedBy = (webhookName: string): string =>
  `admission webhook "${webhookName}" denied the request`;
const templateWebhook = 'haproxytemplateconfigs.haptic.haproxy.org';
const ingressWebhook = 'ingresses.haptic.haproxy.org';

/** The Ready condition once the controller has reconciled `generation`. */
function conditionOf(generation: number): Promise<Ready> {
  return eventually(
    `the condition of generation ${String(generation)}`,
    readyCondition,
    (ready) => ready.observedGeneration === generation,
  );
}

/** Messages of the namespace's Events with `reason` (about `name`, when given). */
async function eventMessages(reason: string, name?: string): Promise<string[]> {
  const selector = `reason=${reason}${name === undefined ? '' : `,involvedObject.name=${name}`}`;
  const list = await getJson<{ items: { message?: string }[] }>([
    ...['get', 'events', '--field-selector', selector],
  ]);
  return list.items.map((item) => item.message ?? '');
}

/** What each agent runs and how often its HAProxy reloaded, asked as the controller asks. */
async function agentStates(): Promise<string[]> {
  return Promise.all(
    site.replicas.map(async (replica) => {
      const answer = await rawRequest({
        host: replica.address,
        port: replica.agentPort,
        ...controllerIdentity,
      });
      const state = answer.body as AgentStateBody;
      const reloads = state.haproxy.reachable ? state.haproxy.master.reloads : -1;
      return `${replica.name} ${state.configDigest ?? 'none'} reloads=${String(reloads)}`;
    }),
  );
}

/** Waits until the agents report `states` again (the controller's sync restores them). */
function agentsRunning(states: readonly string[]): Promise<string[]> {
  const digests = (list: readonly string[]) => list.map((state) => state.split(' ', 2).join(' '));
  return eventually(
    'the agents back on the configuration',
    agentStates,
    (now) => digests(now).join() === digests(states).join(),
  );
}

const canary = 'canary.example.com';
const alphaPaths = {
  paths: [
    {
      path: '/',
      pathType: 'Prefix',
      backend: { service: { name: 'alpha', port: { number: 80 } } },
    },
  ],
};
const canaryServed = ['200 alpha /', '200 alpha /'];

/** The secret is nowhere in `text` (found in `where`). */
function expectNoSecret(text: string, where = 'the message'): void {
  expect(text, where).not.toContain('TOPSECRET');
  expect(text, where).not.toContain('hunter2');
}

/** The identity in the Secret the controller Pod mounts as agent-tls. */
async function readControllerIdentity(controller: SitePod): Promise<typeof controllerIdentity> {
  const pod = await getJson<{
    spec: { volumes: { name: string; secret?: { secretName: string } }[] };
  }>(['get', 'pod', controller.name]);
  const secretName = pod.spec.volumes.find((v) => v.name === 'agent-tls')?.secret?.secretName;
  if (secretName === undefined) throw new Error(`${controller.name} mounts no agent-tls Secret`);
  const { data } = await getJson<{ data: Record<string, string> }>(['get', 'secret', secretName]);
  const key = (name: string): Buffer => {
    const value = data[name];
    if (value === undefined) throw new Error(`Secret ${secretName} has no ${name}`);
    return Buffer.from(value, 'base64');
  };
  return { cert: key('tls.crt'), key: key('tls.key'), ca: key('ca.crt') };
}

beforeAll(async () => {
  site = await LocalSite.start('sec-doors', { webhook: true });
  watchedPods = [...site.controllers, ...site.replicas];
  await root.plantInPods(site, watchedPods);
  await site.addBackend('alpha');
  await site.apply(site.ingress('canary', [{ host: canary, http: alphaPaths }]));
  await eventually(
    'the canary served',
    () => site.everywhere(canary, '/', ['http']),
    (answers) => answers.join() === canaryServed.join(),
  );
  installed = (await getJson<{ spec: TemplateSpec }>(['get', 'haproxytemplateconfig', 'haptic']))
    .spec;
  const controller = site.controllers[0];
  if (controller === undefined) throw new Error('no controller');
  controllerIdentity = await readControllerIdentity(controller);
  registration = await ChartWebhook.of(site.namespace);
  webhook = registration.target(controller);
}, 420_000);

afterAll(async () => {
  await site.stop();
  root.remove();
});

describe('preconditions: the paths the attacks name exist where a payload could run', () => {
  it('every container of the Pods has the root in an emptyDir at /tmp', () => {
    const containers = root.mounts.map((m) => `${m.pod.name}/${m.container}`);
    // The controller (controller, config-check) and each HAProxy (agent, config-check, haproxy).
    expect(containers).toHaveLength(site.controllers.length * 2 + site.replicas.length * 3);
    for (const mount of root.mounts) {
      expect(mount.volume, `${mount.pod.name}/${mount.container}`).toBeDefined();
    }
  });

  it('a marker each container writes as its own user is found, and it can read the outside files', async () => {
    for (const mount of root.mounts) {
      const where = `${mount.pod.name}/${mount.container}`;
      const name = `${mount.pod.name}-${mount.container}`;
      // `test -r a -a -r b …`: every outside file readable by the container's user.
      const readable = Object.keys(outsideFiles()).flatMap((file) => [
        '-a',
        '-r',
        join(root.outside, file),
      ]);
      await site.exec(mount.pod.name, mount.container, ['test', ...readable.slice(1)]);
      expect(ran('precondition', name), where).toBe(false);
      await site.exec(mount.pod.name, mount.container, ['touch', marker('precondition', name)]);
      const copy = root.copyOf(mount);
      if (copy === undefined) throw new Error(`${where} has no copy of the root`);
      expect(root.found('precondition', name), where).toEqual([
        join(copy, 'markers', `precondition-${slug(name)}`),
      ]);
      // Gone again, so that afterwards every copy in the Pods must be empty.
      rmSync(join(copy, 'markers', `precondition-${slug(name)}`));
    }
  });

  /** The one copy of the root a Pod's `volume` holds, on the host. */
  function copyIn(pod: SitePod, volume: string): string {
    const mount = root.mounts.find((m) => m.pod.uid === pod.uid && m.volume === volume);
    const copy = mount === undefined ? undefined : root.copyOf(mount);
    if (copy === undefined) throw new Error(`${pod.name} has no copy of the root in ${volume}`);
    return copy;
  }

  /** Expects the marker in exactly `copy`, then removes it. */
  function expectMarkerIn(copy: string, door: string, name: string): void {
    const file = join(copy, 'markers', `${door}-${slug(name)}`);
    expect(root.found(door, name), name).toEqual([file]);
    rmSync(file);
  }

  const luaLoad = { global: ['  lua-load files/x.lua'] };

  it("Lua handed straight to each Pod's check sandbox (no lint in front) leaves its marker there (in-Pod control)", async () => {
    const pods = [
      ...site.controllers.map((pod) => ({ pod, caller: 'controller' })),
      ...site.replicas.map((pod) => ({ pod, caller: 'agent' })),
    ];
    for (const { pod, caller } of pods) {
      const { files } = bundle(luaLoad, marker('control-sandbox', pod.name));
      // The sandbox's own client protocol, from the container that calls it in the chart.
      const answer = await site.exec(pod.name, caller, [
        ...['/usr/local/bin/node', '-e', postToSocket],
        ...[defaultCheckSocket, sandboxPaths.check, encodeApply(files).body.toString()],
      ]);
      expect(JSON.parse(answer), pod.name).toEqual({ ok: true });
      expectMarkerIn(copyIn(pod, 'check-tmp'), 'control-sandbox', pod.name);
    }
  });

  it("Lua loaded by each replica's serving HAProxy (haproxy -c as its user) leaves its marker there (in-Pod control)", async () => {
    for (const replica of site.replicas) {
      const copy = copyIn(replica, 'tmp');
      const name = `control-${replica.name}`;
      for (const file of bundle(luaLoad, marker('control-haproxy', replica.name)).files) {
        mkdirSync(dirname(join(copy, name, file.path)), { recursive: true, mode: 0o755 });
        writeFileSync(join(copy, name, file.path), file.content, { mode: 0o644 });
      }
      const dir = join(root.path, name);
      await site.exec(replica.name, 'haproxy', [
        'haproxy',
        '-c',
        '-C',
        dir,
        '-f',
        `${dir}/haproxy.cfg`,
      ]);
      expectMarkerIn(copy, 'control-haproxy', replica.name);
    }
  });
});

/**
 * `node -e` in a container: POSTs argv[3] (JSON) to path argv[2] on the Unix socket argv[1]
 * and prints the answer.
 */
const postToSocket = [
  'const [socketPath, path, body] = process.argv.slice(1);',
  "const call = require('node:http').request(",
  '  { socketPath, path, method: "POST",',
  '    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },',
  "  (res) => { let text = ''; res.on('data', (c) => (text += c)); res.on('end', () => process.stdout.write(text)); },",
  ');',
  "call.on('error', (error) => { console.error(error.message); process.exitCode = 1; });",
  'call.end(body);',
].join('\n');

describe('the HAProxyTemplateConfig door', () => {
  it('the same lines in the delivered configuration run the Lua under plain haproxy -c (control)', async () => {
    const replica = site.replicas[0];
    if (replica === undefined) throw new Error('no replica');
    const configDir = site.emptyDir(replica, 'haproxy-config');
    const delivered = readFileSync(join(configDir, 'haproxy.cfg'), 'utf8');
    for (const attack of luaAttacks) {
      const dir = join(root.path, `control-template-${slug(attack.name)}`);
      cpSync(configDir, dir, { recursive: true });
      const { text, firstAddedLine } = withLines(
        delivered,
        attack.global ?? [],
        attack.frontend ?? [],
      );
      // The template's lines before any Liquid tag are the rendered configuration's lines.
      expect(firstAddedLine).toBe(attackSpec(attack, '').firstAddedLine);
      writeFileSync(join(dir, 'haproxy.cfg'), text);
      mkdirSync(join(dir, 'files'), { recursive: true });
      writeFileSync(join(dir, 'files/x.lua'), luaMarkerScript(marker('control-b', attack.name)));
      chmodSync(dir, 0o755);
      await plainHaproxyCheck(dir);
      expect(ran('control-b', attack.name), attack.name).toBe(true);
    }
  });

  it.each(attacks)(
    '$name through the API server: the webhook denies it with keyword and line, nothing stored or run',
    async (attack) => {
      const generation = await storedGeneration();
      const { spec, firstAddedLine } = attackSpec(attack, marker('a', attack.name));
      const result = await patchSpec(spec);
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain(deniedBy(templateWebhook));
      expect(result.stderr).toContain(refusalText(attack, firstAddedLine));
      expectNoSecret(result.stderr);
      expect(await storedGeneration()).toBe(generation);
      expect(ran('a', attack.name)).toBe(false);
    },
  );

  it('a secret in a pattern file HAProxy reads, through the API server: denied with the reduced line only', async () => {
    const generation = await storedGeneration();
    const { spec, firstAddedLine } = attackSpec(inDirectorySecret, marker('a', 'in-dir'));
    const result = await patchSpec(spec);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(deniedBy(templateWebhook));
    expect(result.stderr).toContain(invalidAcl(firstAddedLine));
    expectNoSecret(result.stderr);
    expect(await storedGeneration()).toBe(generation);
  });

  // What the controller does with a configuration no webhook was asked about: the chart
  // installed without it, or the controller down while failurePolicy Ignore let the write in.
  describe('past admission (the webhook not asked)', () => {
    let restore: () => Promise<void> = () => Promise.resolve();
    beforeAll(async () => {
      const [probe] = luaAttacks;
      if (probe === undefined) throw new Error('no Lua attack');
      const { spec } = attackSpec(probe, marker('probe', probe.name));
      restore = await registration.without(
        [templateWebhook],
        async () => (await patchSpec(spec, true)).exitCode === 0,
      );
    });
    afterAll(async () => {
      await restore();
    });

    it.each(attacks)(
      '$name: Ready=False LintFailed with keyword and line, an Event, nothing delivered or run',
      async (attack) => {
        const before = await agentStates();
        const { spec, firstAddedLine } = attackSpec(attack, marker('b', attack.name));
        const ready = await conditionOf(await putSpec(spec));
        const refusal = refusalText(attack, firstAddedLine);
        expect(ready).toMatchObject({ status: 'False', reason: 'LintFailed' });
        expect(ready.message).toContain(refusal);
        expectNoSecret(ready.message);
        const events = await eventually(
          'a LintFailed Event',
          () => eventMessages('LintFailed', 'haptic'),
          (messages) => messages.some((message) => message.includes(refusal)),
        );
        expectNoSecret(events.join('\n'));
        expect(await agentStates()).toEqual(before);
        expect(await site.everywhere(canary, '/', ['http'])).toEqual(canaryServed);
        expect(ran('b', attack.name)).toBe(false);
      },
    );

    it('a secret in a pattern file HAProxy reads: CheckFailed with the reduced line only', async () => {
      const before = await agentStates();
      const { spec, firstAddedLine } = attackSpec(inDirectorySecret, marker('b', 'in-dir'));
      const ready = await conditionOf(await putSpec(spec));
      expect(ready).toMatchObject({ status: 'False', reason: 'CheckFailed' });
      expect(ready.message).toContain(invalidAcl(firstAddedLine));
      expectNoSecret(ready.message);
      expectNoSecret((await eventMessages('CheckFailed', 'haptic')).join('\n'));
      expect(await agentStates()).toEqual(before);
    });
  });

  it('resumes with the installed template', async () => {
    const ready = await conditionOf(await putSpec(installed));
    expect(ready).toMatchObject({ status: 'True', reason: 'Delivered' });
    expect(await site.everywhere(canary, '/', ['http'])).toEqual(canaryServed);
  });
});

describe('the Ingress door: an annotation the template places on a line of its own', () => {
  /** One annotation line per section; an Ingress without it renders an empty line. */
  const placed = (key: string): string =>
    `{% for ingress in ingresses %}{% if ingress.annotations.${key} %}{{ ingress.annotations.${key} }}{% endif %}{% endfor %}`;
  const placeable = attacks.filter(
    (attack) =>
      attack.files === undefined &&
      (attack.global ?? []).length + (attack.frontend ?? []).length === 1,
  );
  const lines = { global: 0, frontend: 0 };

  beforeAll(async () => {
    const global = withLines(installed.haproxyConfig.template, [placed('global')], []);
    const frontend = withLines(global.text, [], [placed('frontend')]);
    lines.global = global.firstAddedLine;
    lines.frontend = frontend.firstAddedLine;
    const spec = {
      ...installed,
      haproxyConfig: { template: frontend.text },
      files: templateFiles({}, marker('c', 'ingress')).files,
    };
    const ready = await conditionOf(await putSpec(spec));
    expect(ready).toMatchObject({ status: 'True', reason: 'Delivered' });
  });

  it('places a harmless annotation where the template says (control)', async () => {
    const name = 'harmless';
    const baseline = await readyCondition();
    await site.apply({
      ...site.ingress(name, [{ host: `${name}.example.com`, http: alphaPaths }]),
      metadata: {
        name,
        namespace: site.namespace,
        annotations: { 'haproxy-haptic.org/frontend': '  http-request set-header X-Placed yes' },
      },
    });
    const replica = site.replicas[0];
    if (replica === undefined) throw new Error('no replica');
    const config = join(site.emptyDir(replica, 'haproxy-config'), 'haproxy.cfg');
    const lineOf = (): string | undefined =>
      readFileSync(config, 'utf8').split('\n')[lines.frontend - 1];
    // Ready names the digest the agents run: another one with the Ingress, the same after.
    await eventually(
      'delivered with it',
      readyCondition,
      (condition) => condition.status === 'True' && condition.message !== baseline.message,
    );
    expect(lineOf()).toBe('  http-request set-header X-Placed yes');
    expect((await kubectl(['delete', 'ingress', name, '-n', site.namespace])).exitCode).toBe(0);
    await eventually(
      'delivered without it',
      readyCondition,
      (condition) => condition.status === 'True' && condition.message === baseline.message,
    );
    expect(lineOf()).toBe('');
  });

  /** An Ingress of its own for `attack`, its one line in the annotation of its section. */
  function annotated(attack: ConfigAttack) {
    const key = (attack.global ?? []).length > 0 ? 'global' : 'frontend';
    const value = [...(attack.global ?? []), ...(attack.frontend ?? [])].join('');
    const name = slug(attack.name).slice(0, 50);
    const annotation = `haproxy-haptic.org/${key}`;
    const host = `${name}.example.com`;
    const object = {
      ...site.ingress(name, [{ host, http: alphaPaths }]),
      metadata: { name, namespace: site.namespace, annotations: { [annotation]: value } },
    };
    // The routing model refuses values with bytes outside a short list; the rest reach the
    // template and the lint.
    const excluded = isProblem(templateAnnotations({ [annotation]: value }, name));
    const refusal = refusalText(attack, key === 'global' ? lines.global : lines.frontend);
    /** What a refusal of the lint names: `"lua-load"`. */
    const directive = refusal.slice(refusal.indexOf('"'));
    return { name, annotation, host, object, excluded, directive };
  }

  it.each(placeable)(
    '$name through the API server: the webhook denies the Ingress naming the annotation, nothing stored or run',
    async (attack) => {
      const { name, annotation, object, excluded, directive } = annotated(attack);
      const result = await kubectl(['apply', '-f', '-'], JSON.stringify(object));
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain(deniedBy(ingressWebhook));
      expect(result.stderr).toContain(`metadata.annotations["${annotation}"]`);
      if (!excluded) expect(result.stderr).toContain(directive);
      expectNoSecret(result.stderr);
      expect((await kubectl(['get', 'ingress', name, '-n', site.namespace])).exitCode).not.toBe(0);
      expect(ran('c', 'ingress')).toBe(false);
    },
  );

  // What the controller does with an Ingress no webhook was asked about: the chart installed
  // without it, or the controller down while failurePolicy Ignore let the write in.
  describe('past admission (the webhook not asked)', () => {
    let restore: () => Promise<void> = () => Promise.resolve();
    beforeAll(async () => {
      const probe = placeable.find((attack) => attack.runsLua === true);
      if (probe === undefined) throw new Error('no placeable Lua attack');
      const { object } = annotated(probe);
      restore = await registration.without([ingressWebhook], async () => {
        const dryRun = await kubectl(
          ['apply', '--dry-run=server', '-f', '-'],
          JSON.stringify(object),
        );
        return dryRun.exitCode === 0;
      });
    });
    afterAll(async () => {
      await restore();
    });

    it.each(placeable)(
      '$name: the Ingress is left out with an Event, nothing delivered or run, the rest served',
      async (attack) => {
        const { name, annotation, host, object, excluded, directive } = annotated(attack);
        if (attack.name.startsWith('§1')) expect(excluded).toBe(true);
        const before = await agentStates();
        const baseline = await readyCondition();
        await site.apply(object);
        try {
          if (excluded) {
            const events = await eventually(
              'an IngressExcluded Event',
              () => eventMessages('IngressExcluded', name),
              (messages) => messages.some((message) => message.includes(annotation)),
            );
            expectNoSecret(events.join('\n'));
            expect(await readyCondition()).toEqual(baseline);
          } else {
            // The lint refuses the line the annotation made: that Ingress is left out with the
            // lint's reason, and the others keep being served (one tenant never freezes all).
            const events = await eventually(
              'an IngressExcluded Event from the lint',
              () => eventMessages('IngressExcluded', name),
              (messages) => messages.some((message) => message.includes('the allow-list lint')),
            );
            expect(events.join('\n')).toContain(directive);
            expect(events.join('\n')).toContain(annotation);
            expectNoSecret(events.join('\n'));
            expect(await readyCondition()).toEqual(baseline);
          }
          expect(await agentStates()).toEqual(before);
          expect(await site.everywhere(host, '/', ['http'])).toEqual(
            Array(2).fill('404 404 no Ingress matches this host and path'),
          );
          expect(await site.everywhere(canary, '/', ['http'])).toEqual(canaryServed);
          expect(ran('c', 'ingress')).toBe(false);
        } finally {
          await kubectl(['delete', 'ingress', name, '-n', site.namespace]);
          await eventually(
            'served as before the Ingress',
            readyCondition,
            (condition) => condition.status === 'True' && condition.message === baseline.message,
          );
        }
      },
    );
  });

  afterAll(async () => {
    await conditionOf(await putSpec(installed));
  });
});

describe('the webhook door: unauthenticated reviews', () => {
  const templateConfigKind = {
    group: 'haproxy-haptic.org',
    version: 'v1alpha1',
    kind: 'HAProxyTemplateConfig',
  };
  const review = (uid: string, name: string, spec: TemplateSpec) =>
    postUnauthenticatedReview(
      webhook,
      admissionReview(uid, templateConfigKind, 'haproxytemplateconfigs', {
        apiVersion: 'haproxy-haptic.org/v1alpha1',
        kind: 'HAProxyTemplateConfig',
        metadata: { name, namespace: site.namespace },
        spec,
      }),
    );

  it('denies the unparsable template the foreign reviews carry under the configured name (control)', async () => {
    const unparsable = {
      ...installed,
      haproxyConfig: { template: `${installed.haproxyConfig.template}{% no_such_tag %}\n` },
    };
    const answer = await review('unparsable', 'haptic', unparsable);
    expect(answer).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(answer.status?.message).toContain('does not parse');
  });

  it.each(attacks)(
    '$name: denied with keyword and line for the configured name, allowed unread for a foreign one',
    async (attack) => {
      const { spec, firstAddedLine } = attackSpec(attack, marker('d', attack.name));
      const uid = slug(attack.name);
      const answer = await review(uid, 'haptic', spec);
      expect(answer).toMatchObject({ uid, allowed: false, status: { code: 403 } });
      expect(answer.status?.message).toContain(refusalText(attack, firstAddedLine));
      expectNoSecret(answer.status?.message ?? '');
      // A tag Liquid cannot parse: had the foreign object been rendered, it would be denied.
      const unparsable = {
        ...spec,
        haproxyConfig: { template: `${spec.haproxyConfig.template}{% no_such_tag %}\n` },
      };
      expect(await review(`${uid}-foreign`, 'foreign', unparsable)).toEqual({
        uid: `${uid}-foreign`,
        allowed: true,
      });
      expect(ran('d', attack.name)).toBe(false);
    },
  );

  it('a secret in a pattern file HAProxy reads: denied with the reduced line only', async () => {
    const { spec, firstAddedLine } = attackSpec(inDirectorySecret, marker('d', 'in-dir'));
    const answer = await review('in-dir', 'haptic', spec);
    expect(answer).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(answer.status?.message).toContain(invalidAcl(firstAddedLine));
    expectNoSecret(answer.status?.message ?? '');
  });
});

describe("the agent door: /v1/apply with the controller's client certificate", () => {
  async function apply(files: ReturnType<typeof bundle>['files']) {
    const replica = site.replicas[0];
    if (replica === undefined) throw new Error('no replica');
    const body = encodeApply(files).body.toString();
    const answer = await rawRequest({
      host: replica.address,
      port: replica.agentPort,
      path: '/v1/apply',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
      ...controllerIdentity,
    });
    return {
      status: answer.status,
      error: (answer.body as { error?: Record<string, string> }).error ?? {},
    };
  }

  it('the same files run the Lua under plain haproxy -c (control)', async () => {
    for (const attack of luaAttacks) {
      const dir = join(root.path, `control-agent-${slug(attack.name)}`);
      for (const file of bundle(attack, marker('control-e', attack.name)).files) {
        mkdirSync(dirname(join(dir, file.path)), { recursive: true });
        writeFileSync(join(dir, file.path), file.content);
      }
      await plainHaproxyCheck(dir);
      expect(ran('control-e', attack.name), attack.name).toBe(true);
    }
  });

  it.each(attacks)(
    '$name: 422 ConfigForbidden with keyword and line, HAProxy not reloaded, nothing ran',
    async (attack) => {
      const before = await agentStates();
      const { files, firstAddedLine } = bundle(attack, marker('e', attack.name));
      const answer = await apply(files);
      try {
        expect(answer).toMatchObject({ status: 422, error: { reason: 'ConfigForbidden' } });
        expect(answer.error.message).toContain(refusalText(attack, firstAddedLine));
        expectNoSecret(JSON.stringify(answer));
        expect(await agentStates()).toEqual(before);
        expect(await site.everywhere(canary, '/', ['http'])).toEqual(canaryServed);
        expect(ran('e', attack.name)).toBe(false);
      } finally {
        // Were it accepted, the controller's sync puts the agent back on its configuration.
        if (answer.status === 200) await agentsRunning(before);
      }
    },
  );

  it("a secret in a pattern file HAProxy reads: 422 ConfigRejected with the reduced line only, HAProxy's log without it", async () => {
    const replica = site.replicas[0];
    if (replica === undefined) throw new Error('no replica');
    const before = await agentStates();
    const { files, firstAddedLine } = bundle(inDirectorySecret, marker('e', 'in-dir'));
    const answer = await apply(files);
    expect(answer).toMatchObject({ status: 422, error: { reason: 'ConfigRejected' } });
    expect(answer.error.haproxyMessage).toContain(invalidAcl(firstAddedLine));
    expectNoSecret(JSON.stringify(answer));
    // The agent's sandbox rejects it before the serving HAProxy parses it: no reload, and
    // nothing of the file in the serving HAProxy's own log.
    expect(await agentStates()).toEqual(before);
    expectNoSecret(await site.logs(replica.name, 'haproxy'), `${replica.name}/haproxy`);
  });
});

interface PodLogs {
  readonly items: readonly {
    readonly metadata: { readonly name: string };
    readonly spec: {
      readonly containers: readonly { readonly name: string }[];
      readonly initContainers?: readonly { readonly name: string }[];
    };
    readonly status: {
      readonly containerStatuses?: readonly ContainerRestarts[];
      readonly initContainerStatuses?: readonly ContainerRestarts[];
    };
  }[];
}

interface ContainerRestarts {
  readonly name: string;
  readonly restartCount: number;
}

/**
 * `kubectl logs` of every container of every Pod of the namespace (the release's, the
 * backend's, any hook Job's that remains), and of a container's previous run when it
 * restarted. Empty logs are left out.
 */
async function namespaceLogs(): Promise<{ readonly container: string; readonly text: string }[]> {
  const pods = await getJson<PodLogs>(['get', 'pods']);
  const logs: { container: string; text: string }[] = [];
  for (const pod of pods.items) {
    const statuses = [
      ...(pod.status.containerStatuses ?? []),
      ...(pod.status.initContainerStatuses ?? []),
    ];
    for (const { name } of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
      const restarted = (statuses.find((s) => s.name === name)?.restartCount ?? 0) > 0;
      for (const previous of restarted ? [false, true] : [false]) {
        const result = await kubectl([
          ...['logs', pod.metadata.name, '-c', name, '-n', site.namespace],
          ...(previous ? ['--previous'] : []),
        ]);
        if (result.exitCode !== 0) throw new Error(result.stderr);
        const container = `${pod.metadata.name}/${name}${previous ? ' (previous)' : ''}`;
        if (result.stdout.length > 0) logs.push({ container, text: result.stdout });
      }
    }
  }
  return logs;
}

describe('afterwards', () => {
  it('no payload ran anywhere: the only markers are the controls, on the host', async () => {
    // The Pods whose volumes were planted are still the ones running (a replaced Pod's new
    // volumes would hold no root, and a payload there could not have left a marker).
    await site.refreshPods();
    expect([...site.controllers, ...site.replicas].map((pod) => pod.uid)).toEqual(
      watchedPods.map((pod) => pod.uid),
    );
    const [host, ...inPods] = root.written();
    expect(host?.names.filter((name) => !name.startsWith('control-'))).toEqual([]);
    expect(host?.names).toHaveLength(2 * luaAttacks.length);
    expect(inPods).toHaveLength(watchedPods.length * 2);
    for (const copy of inPods) expect(copy.names, copy.dir).toEqual([]);
  });

  it('no Event, status or log of the release carries the secret', async () => {
    const events = await kubectl(['get', 'events', '-n', site.namespace, '-o', 'json']);
    expectNoSecret(events.stdout);
    const config = await kubectl([
      ...['get', 'haproxytemplateconfig', 'haptic', '-n', site.namespace],
      ...['-o', 'jsonpath={.status}'],
    ]);
    expectNoSecret(config.stdout);
    const logs = await namespaceLogs();
    expect(logs.map((log) => log.container)).toEqual(
      expect.arrayContaining([
        ...site.controllers.map((pod) => `${pod.name}/controller`),
        ...site.replicas.map((pod) => `${pod.name}/haproxy`),
      ]),
    );
    for (const log of logs) expectNoSecret(log.text, log.container);
  });
});
