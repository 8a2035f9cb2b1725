/**
 * `haptic run --check-socket` end to end, in the chart's controller Pod on the node: the
 * controller's `haproxy -c` happens in the Pod's config-check sidecar, a process of another
 * user without the ServiceAccount token or the controller's environment; with the sidecar
 * gone the check is unavailable (there is no in-process fallback) and the last good
 * configuration keeps serving; with it back the controller resumes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../../src/sandbox/check-client.ts';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

beforeAll(async () => {
  site = await LocalSite.start('sbx');
  await site.addBackend('alpha');
}, 180_000);

afterAll(async () => {
  await site.stop();
});

/** The environment of a container's main process (PID 1), as `NAME=value` entries. */
async function environmentOf(pod: string, container: string): Promise<string[]> {
  const text = await site.exec(pod, container, ['cat', '/proc/1/environ']);
  return text.split('\0').filter((entry) => entry !== '');
}

const names = (entries: readonly string[]): string[] =>
  entries.map((entry) => entry.slice(0, entry.indexOf('='))).sort();

async function condition(): Promise<string> {
  return (
    await kubectl([
      'get',
      'haproxytemplateconfig',
      'haptic',
      '-n',
      site.namespace,
      '-o',
      'jsonpath={.status.conditions[0].status} {.status.conditions[0].reason} {.status.conditions[0].message}',
    ])
  ).stdout;
}

async function template(): Promise<string> {
  const get = await kubectl([
    'get',
    'haproxytemplateconfig',
    'haptic',
    '-n',
    site.namespace,
    '-o',
    'json',
  ]);
  return (JSON.parse(get.stdout) as { spec: { haproxyConfig: { template: string } } }).spec
    .haproxyConfig.template;
}

async function patchTemplate(text: string): Promise<void> {
  const result = await kubectl([
    'patch',
    'haproxytemplateconfig',
    'haptic',
    '-n',
    site.namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { haproxyConfig: { template: text } } }),
  ]);
  expect(result.exitCode, result.stderr).toBe(0);
}

describe('haptic run with its check sandbox (config-check sidecar)', () => {
  it('checks in a sidecar process of another user, without the token or the controller environment', async () => {
    const [controller] = site.controllers;
    if (controller === undefined) throw new Error('no controller');
    expect(await site.exec(controller.name, 'config-check', ['id', '-u'])).toBe('65534');
    expect(await site.exec(controller.name, 'controller', ['id', '-u'])).toBe('65532');
    // The controller holds the ServiceAccount token; the sandbox has none of it.
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    await site.exec(controller.name, 'controller', ['test', '-s', token]);
    await expect(
      site.exec(controller.name, 'config-check', ['test', '!', '-e', token]),
    ).resolves.toBe('');
    // Nothing of the controller's own environment (its identity, Pod name, credentials).
    // (The image's and the runtime's variables are in every container: PATH, NODE_ENV, ….)
    const common = ['HOME', 'HOSTNAME', 'NODE_ENV', 'PATH', 'PWD'];
    const own = names(await environmentOf(controller.name, 'controller')).filter(
      (name) => !name.startsWith('KUBERNETES_') && !common.includes(name),
    );
    expect(own).toContain('POD_NAME');
    const sandbox = names(await environmentOf(controller.name, 'config-check'));
    expect(sandbox.filter((name) => own.includes(name))).toEqual([]);
    // The check socket, in the Pod's shared emptyDir, answers.
    const socket = site.socketPath(controller, 'check-socket', 'check.sock');
    expect(await probeSandbox(socket, 1_000)).toBeUndefined();
  });

  it('reports rejections from the sandbox, is unavailable without it, and resumes when it is back', async () => {
    await site.apply(
      site.ingress('shop', [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'alpha', port: { number: 80 } } },
              },
            ],
          },
        },
      ]),
    );
    const served = (answers: string[]) => answers.every((answer) => answer === '200 alpha /');
    await eventually('served', () => site.everywhere('shop.example.com', '/', ['http']), served);
    const [controller] = site.controllers;
    if (controller === undefined) throw new Error('no controller');
    const good = await template();

    // A rejection comes from haproxy -c in the sidecar, which logs its answer.
    await patchTemplate(
      good.replace('balance {{ backend.options.balance }}', 'balance no-such-algorithm'),
    );
    const rejected = await eventually('CheckFailed', condition, (text) =>
      text.startsWith('False CheckFailed'),
    );
    expect(rejected).toMatch(
      /\[ALERT\] haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm HAProxy does not support/,
    );
    const log = await site.logs(controller.name, 'config-check');
    expect(log).toMatch(/"failure":"rejected".*"msg":"check answered"/);

    // With the sidecar frozen, a new configuration cannot be checked, and nothing is delivered.
    await site.container(controller.name, 'config-check', 'pause');
    await patchTemplate(`${good}\n# without the sandbox\n`);
    // The controller waits for its check timeout (60 s), then reports the sandbox unavailable.
    const unavailable = await eventually(
      'unavailable',
      condition,
      (text) => text.includes('The check sandbox at'),
      90_000,
    );
    expect(unavailable).toMatch(
      /^False CheckFailed .*The check sandbox at \S+check\.sock (did not answer|cannot be reached)/,
    );
    expect(await site.everywhere('shop.example.com', '/', ['http'])).toEqual(
      Array(2).fill('200 alpha /'),
    );

    // The sidecar back, the next change is checked and delivered.
    await site.container(controller.name, 'config-check', 'resume');
    const socket = site.socketPath(controller, 'check-socket', 'check.sock');
    await eventually(
      'sidecar up',
      () => probeSandbox(socket, 1_000),
      (problem) => !problem,
    );
    await patchTemplate(`${good}\n# with the sandbox again\n`);
    await eventually('Ready', condition, (text) => text.startsWith('True'));
    await eventually('served', () => site.everywhere('shop.example.com', '/', ['http']), served);
  }, 180_000);
});
