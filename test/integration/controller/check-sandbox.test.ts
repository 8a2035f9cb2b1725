/**
 * `haptic run --check-socket` end to end, as the chart runs it (dev/local-pods): the
 * controller's `haproxy -c` happens in the Pod's config-check sidecar, a process of another
 * user without the ServiceAccount token or the controller's environment; with the sidecar
 * gone the check is unavailable (there is no in-process fallback) and the last good
 * configuration keeps serving; with it back the controller resumes.
 */
import { readFileSync, readdirSync } from 'node:fs';
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

/** The node process (not its watchdog) whose command line holds `words` and a path under `dir`. */
function processOf(dir: string, words: readonly string[]): number {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (
      argv[0] === process.execPath &&
      words.every((word) => argv.includes(word)) &&
      argv.some((arg) => arg.includes(`${dir}/`))
    ) {
      return Number(entry);
    }
  }
  throw new Error(`no process ${words.join(' ')} under ${dir}`);
}

function uidOf(pid: number): number {
  return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

function environmentNames(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => entry.slice(0, entry.indexOf('=')))
    .sort();
}

/** The `--check-socket` the controller process was given. */
function checkSocketOf(pid: number): string {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return args.find((arg) => arg.startsWith('--check-socket='))?.slice(15) ?? '';
}

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
    const dir = controller.pod.options.dir;
    const sandbox = processOf(dir, ['sandbox', 'serve']);
    const haptic = processOf(dir, ['run']);
    expect(uidOf(sandbox)).toBe(65534);
    expect(uidOf(haptic)).toBe(0);
    // The controller holds the ServiceAccount credentials; the sandbox nothing but PATH and HOME.
    expect(environmentNames(haptic)).toContain('KUBECONFIG');
    // (PWD, SHLVL and _ come from the local runner's watchdog shell, not from the chart.)
    const shell = new Set(['PWD', 'SHLVL', '_']);
    expect(environmentNames(sandbox).filter((name) => !shell.has(name))).toEqual(['HOME', 'PATH']);
    const socket = checkSocketOf(haptic);
    expect(socket.startsWith(`${dir}/volumes/check-socket/`)).toBe(true);
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
    await patchTemplate(good.replace('balance roundrobin', 'balance no-such-algorithm'));
    const rejected = await eventually('CheckFailed', condition, (text) =>
      text.startsWith('False CheckFailed'),
    );
    expect(rejected).toMatch(
      /\[ALERT\] haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm HAProxy does not support/,
    );
    const log = readFileSync(controller.pod.logFile('config-check'), 'utf8');
    expect(log).toMatch(/"failure":"rejected".*"msg":"check answered"/);

    // Without the sidecar, a new configuration cannot be checked, and nothing is delivered.
    await controller.pod.stopContainer('config-check');
    await patchTemplate(`${good}\n# without the sandbox\n`);
    const unavailable = await eventually('unavailable', condition, (text) =>
      text.includes('cannot be reached'),
    );
    expect(unavailable).toMatch(/^False CheckFailed .*The check sandbox at \S+check\.sock cannot/);
    expect(await site.everywhere('shop.example.com', '/', ['http'])).toEqual(
      Array(2).fill('200 alpha /'),
    );

    // The sidecar back (as the kubelet restarts it), the next change is checked and delivered.
    controller.pod.start('config-check');
    const socket = checkSocketOf(processOf(controller.pod.options.dir, ['run']));
    await eventually(
      'sidecar up',
      () => probeSandbox(socket, 1_000),
      (problem) => !problem,
    );
    await patchTemplate(`${good}\n# with the sandbox again\n`);
    await eventually('Ready', condition, (text) => text.startsWith('True'));
    await eventually('served', () => site.everywhere('shop.example.com', '/', ['http']), served);
  });
});
