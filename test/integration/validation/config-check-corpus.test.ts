/**
 * Issue 12's attacks (§1, §2, §4, §5) and more of our own, each through the lint and through
 * `haptic config check` (a separate process that starts its own check sandbox): every one is
 * refused with its keyword and line, no Lua payload ran (it would create a marker file), and
 * no secret reaches the output. The payload and a secret file outside the configuration's
 * directory are real; a control run of plain `haproxy -c` shows the payload does create the
 * marker when HAProxy loads it, so its absence means something.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { inspectHaproxyConfig } from '../../../src/validation/haproxy-config-lint.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-corpus-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});
// World-writable, so the payload could write its marker even as the sandbox's user 65534.
const markers = join(root, 'markers');
mkdirSync(markers);
chmodSync(root, 0o755);
chmodSync(markers, 0o777);
const secret = 'TOPSECRET-8c1f hunter2';
const outside = join(root, 'outside');
mkdirSync(outside);
writeFileSync(join(outside, 'secret.txt'), `${secret}\n`);

const globalLines = ['global', '  default-path config', '  log stderr format raw local0'];
const proxyLines = [
  'defaults',
  '  mode http',
  '  timeout connect 1s',
  '  timeout client 1s',
  '  timeout server 1s',
  'frontend fe',
  '  bind 127.0.0.1:18443',
  '  default_backend be',
  'backend be',
  '  server s1 127.0.0.1:1',
];

interface Case {
  readonly name: string;
  /** Lines added at the end of the global section or of the frontend. */
  readonly global?: readonly string[];
  readonly frontend?: readonly string[];
  /** The directive the refusal names, and the line it is on. */
  readonly directive: string;
  readonly line: number;
}

/** A file name for a case. */
const slug = (name: string): string => name.replace(/[^a-z0-9]+/gi, '-');

/** A configuration directory with the case's lines and a Lua payload in files/x.lua. */
function configDir(name: string, global: readonly string[], frontend: readonly string[]): string {
  const dir = join(root, slug(name));
  mkdirSync(join(dir, 'files'), { recursive: true });
  writeFileSync(
    join(dir, 'files/x.lua'),
    `local f = io.open(${JSON.stringify(join(markers, slug(name)))}, "w")\nif f then f:close() end\n`,
  );
  const lines = [
    ...globalLines,
    ...global,
    ...proxyLines.slice(0, 7),
    ...frontend,
    ...proxyLines.slice(7),
  ];
  writeFileSync(join(dir, 'haproxy.cfg'), `${lines.join('\n')}\n`);
  return dir;
}

const atGlobal = globalLines.length + 1;
const atFrontend = globalLines.length + 7 + 1;

const cases: readonly Case[] = [
  {
    name: '§1 VT before lua-load',
    global: ['\vlua-load files/x.lua'],
    directive: 'lua-load',
    line: atGlobal,
  },
  {
    name: '§1 FF before lua-load',
    global: ['\flua-load files/x.lua'],
    directive: 'lua-load',
    line: atGlobal,
  },
  {
    name: '§2 no lua-load',
    global: ['  no lua-load files/x.lua'],
    directive: 'no lua-load',
    line: atGlobal,
  },
  {
    name: '§2 no lua-load-per-thread',
    global: ['  no lua-load-per-thread files/x.lua'],
    directive: 'no lua-load-per-thread',
    line: atGlobal,
  },
  {
    name: '§4 acl -f reading /etc/passwd',
    frontend: ['  acl x src -f /etc/passwd'],
    directive: '-f /etc/passwd',
    line: atFrontend,
  },
  {
    name: '§4 acl -f reading a secret outside',
    frontend: [`  acl x src -f ${outside}/secret.txt`],
    directive: `-f ${outside}/secret.txt`,
    line: atFrontend,
  },
  {
    name: '§5 return file',
    frontend: [
      `  http-request return status 200 content-type text/plain file ${outside}/secret.txt`,
    ],
    directive: `file ${outside}/secret.txt`,
    line: atFrontend,
  },
  {
    name: '§5 stats socket',
    global: ['  stats socket ipv4@127.0.0.1:19999 level admin'],
    directive: 'stats socket',
    line: atGlobal,
  },
  {
    name: '§5 env() in a response',
    frontend: ['  http-request return status 200 content-type text/plain lf-string "%[env(PATH)]"'],
    directive: 'env()',
    line: atFrontend,
  },
  {
    name: 'an escaped lua-load',
    global: ['  lua\\x2dload files/x.lua'],
    directive: 'lua-load',
    line: atGlobal,
  },
  {
    name: 'lua-load inside a false .if',
    global: ['.if 0', '  lua-load files/x.lua', '.endif'],
    directive: 'lua-load',
    line: atGlobal + 1,
  },
  {
    name: 'a relative path leaving the directory',
    frontend: ['  acl x src -f ../outside/secret.txt'],
    directive: '-f ../outside/secret.txt',
    line: atFrontend,
  },
  {
    name: 'a map converter reading a secret',
    frontend: [`  http-request set-var(txn.x) src,map_ip(${outside}/secret.txt)`],
    directive: `map ${outside}/secret.txt`,
    line: atFrontend,
  },
  {
    name: 'a bind setting with a parenthesis',
    frontend: [`  bind :8443 ssl crt(x) ${outside}/secret.txt`],
    directive: 'bind crt(x)',
    line: atFrontend,
  },
  {
    name: 'a Lua service',
    frontend: ['  http-request use-service lua.x'],
    directive: 'http-request use-service lua.x',
    line: atFrontend,
  },
  {
    name: 'a variable outside the allow-list',
    frontend: ['  http-request set-header X "${PATH}x"'],
    directive: '${PATH}',
    line: atFrontend,
  },
];

async function configCheck(target: string) {
  const result = await execa(
    process.execPath,
    [join(projectRoot, 'src/cli/main.ts'), 'config', 'check', target],
    { reject: false, env: { PATH: process.env.PATH ?? '' }, extendEnv: false, timeout: 60_000 },
  );
  return { exitCode: result.exitCode, output: `${result.stdout}\n${result.stderr}` };
}

describe.concurrent('issue 12 attacks through the lint and haptic config check', () => {
  it('the payload creates its marker when plain haproxy -c loads it (control)', async () => {
    const dir = configDir('control', ['  lua-load files/x.lua'], []);
    await execa('haproxy', ['-c', '-C', dir, '-f', join(dir, 'haproxy.cfg')], { reject: false });
    expect(existsSync(join(markers, 'control'))).toBe(true);
  });

  it.each(cases)('$name: refused with keyword and line, nothing ran', async (attack) => {
    const dir = configDir(attack.name, attack.global ?? [], attack.frontend ?? []);
    const [finding] = inspectHaproxyConfig(readFileSync(join(dir, 'haproxy.cfg'), 'utf8')).findings;
    expect(finding).toMatchObject({ directive: attack.directive, line: attack.line });

    const { exitCode, output } = await configCheck(dir);
    expect(exitCode).toBe(1);
    expect(output).toContain(`line ${attack.line}: "${attack.directive}"`);
    expect(output).toContain('HAProxy did not run');
    expect(output).not.toContain(secret);
    expect(existsSync(join(markers, slug(attack.name)))).toBe(false);
  });

  it('a pattern file inside the directory passes the lint; HAProxy rejects it and its content stays out of the output', async () => {
    const dir = configDir('in-dir secret', [], ['  acl x src -f secret.txt']);
    writeFileSync(join(dir, 'secret.txt'), `${secret}\n`);
    const { exitCode, output } = await configCheck(dir);
    expect(exitCode).toBe(1);
    expect(output).toContain(`[ALERT] haproxy.cfg:${atFrontend}: 'acl' has an invalid ACL`);
    expect(output).not.toContain('TOPSECRET');
    expect(output).not.toContain('hunter2');
  });

  it('accepts the production fixture (TLS, maps, ACL files, error files, checks, cache) with exit 0', async () => {
    const dir = join(root, 'production');
    cpSync(join(projectRoot, 'test/fixtures/haproxy-production'), dir, { recursive: true });
    await execa('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', join(dir, 'ssl/key.pem'), '-out', join(dir, 'ssl/ca.pem')],
      ...['-days', '2', '-subj', '/CN=a.example.com'],
    ]);
    writeFileSync(
      join(dir, 'ssl/site.pem'),
      `${readFileSync(join(dir, 'ssl/ca.pem'), 'utf8')}${readFileSync(join(dir, 'ssl/key.pem'), 'utf8')}`,
    );
    const { exitCode, output } = await configCheck(dir);
    expect(output).toContain('is valid');
    expect(exitCode).toBe(0);
  });

  it('accepts the valid configuration with exit 0', async () => {
    const dir = configDir('valid', [], []);
    expect(await configCheck(dir)).toMatchObject({ exitCode: 0 });
  });

  it('exits 2 for a directory without haproxy.cfg', async () => {
    expect((await configCheck(outside)).exitCode).toBe(2);
  });
});
