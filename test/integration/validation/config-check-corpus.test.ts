/**
 * Issue 12's attacks (§1, §2, §4, §5) and more of our own, each through the lint and through
 * `haptic config check` (a separate process that starts its own check sandbox): every one is
 * refused with its keyword and line, no Lua payload ran (it would create a marker file), and
 * no secret reaches the output. The payload and a secret file outside the configuration's
 * directory are real; a control run of plain `haproxy -c` (as the sandbox's user) shows each Lua
 * payload does create its marker when HAProxy loads it, so its absence means something. The
 * attacks are shared with the other doors' tests (test/support/config-attacks.ts).
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
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { plainHaproxyCheck } from '../../support/plain-haproxy-check.ts';
import { inspectConfigFiles } from '../../../src/haproxy/files-lint.ts';
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

const root = mkdtempSync(join(tmpdir(), 'haptic-corpus-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});
// World-writable, so the payload could write its marker even as the sandbox's user 65534.
const markers = join(root, 'markers');
mkdirSync(markers);
chmodSync(root, 0o755);
chmodSync(markers, 0o777);
const outside = join(root, 'outside');
mkdirSync(outside);
for (const [name, content] of Object.entries(outsideFiles())) {
  writeFileSync(join(outside, name), content);
}
const attacks = configAttacks(outside);

/** A configuration directory with the attack's lines and files, and a Lua payload in files/x.lua. */
function configDir(name: string, attack: Pick<ConfigAttack, 'global' | 'frontend' | 'files'>) {
  const dir = join(root, slug(name));
  mkdirSync(join(dir, 'files'), { recursive: true });
  writeFileSync(join(dir, 'files/x.lua'), luaMarkerScript(join(markers, slug(name))));
  for (const [path, content] of Object.entries(attack.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const { config, firstAddedLine } = corpusConfig(attack);
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  return { dir, config, firstAddedLine };
}

async function configCheck(target: string) {
  const result = await execa(
    process.execPath,
    [join(projectRoot, 'src/cli/main.ts'), 'config', 'check', target],
    { reject: false, env: { PATH: process.env.PATH ?? '' }, extendEnv: false, timeout: 60_000 },
  );
  return { exitCode: result.exitCode, output: `${result.stdout}\n${result.stderr}` };
}

describe.concurrent('issue 12 attacks through the lint and haptic config check', () => {
  it.each(attacks.filter((attack) => attack.runsLua === true))(
    '$name: plain haproxy -c runs the payload and creates its marker (control)',
    async (attack) => {
      const name = `control ${attack.name}`;
      const { dir } = configDir(name, attack);
      await plainHaproxyCheck(dir);
      expect(existsSync(join(markers, slug(name)))).toBe(true);
    },
  );

  it.each(attacks)('$name: refused with keyword and line, nothing ran', async (attack) => {
    const { dir, config, firstAddedLine } = configDir(attack.name, attack);
    const [finding] = inspectConfigFiles((path) =>
      path === 'haproxy.cfg' ? config : attack.files?.[path],
    ).findings;
    expect(finding && `${finding.file}: line ${String(finding.line)}: "${finding.directive}"`).toBe(
      refusalText(attack, firstAddedLine),
    );

    const { exitCode, output } = await configCheck(dir);
    expect(exitCode).toBe(1);
    expect(output).toContain(refusalText(attack, firstAddedLine));
    expect(output).toContain('HAProxy did not run');
    expect(output).not.toContain(attackSecret);
    expect(existsSync(join(markers, slug(attack.name)))).toBe(false);
  });

  it('a pattern file inside the directory passes the lint; HAProxy rejects it and its content stays out of the output', async () => {
    const { dir, firstAddedLine } = configDir('in-dir secret', {
      frontend: ['  acl x src -f secret.txt'],
      files: { 'secret.txt': `${attackSecret}\n` },
    });
    const { exitCode, output } = await configCheck(dir);
    expect(exitCode).toBe(1);
    expect(output).toContain(
      `[ALERT] haproxy.cfg:${String(firstAddedLine)}: 'acl' has an invalid ACL`,
    );
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
    const { dir } = configDir('valid', {});
    expect(await configCheck(dir)).toMatchObject({ exitCode: 0 });
  });

  it('exits 2 for a directory without haproxy.cfg', async () => {
    expect((await configCheck(outside)).exitCode).toBe(2);
  });
});
