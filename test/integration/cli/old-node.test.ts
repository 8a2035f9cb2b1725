/**
 * The built binary on a Node older than package.json admits: one line naming the versions and
 * the fix, exit 2, before any module that fails on that Node is evaluated (the system Node of
 * this kind of machine is 20, which lacks Set.prototype.union). Skipped where no older Node
 * is installed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';

const systemNode = '/usr/bin/node';
const systemVersion = existsSync(systemNode)
  ? execFileSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()
  : undefined;
const old = systemVersion !== undefined && Number(systemVersion.split('.')[0]) < 22;
const main = join(projectRoot, 'dist/cli/main.js');
const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const lowest = manifest.engines.node.replace(/^>=/, '');

describe.skipIf(!old)(`haptic on the system Node (v${systemVersion ?? 'none'})`, () => {
  it.each([
    ['preflight', ['preflight', '--offline']],
    ['webhook', ['webhook', '--help']],
    ['version', ['version']],
    ['no command', []],
  ])('%s: says which Node it needs and how to get it, exit 2', async (_, args) => {
    const result = await execa(systemNode, [main, ...args], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `haptic needs Node ≥ ${lowest} (found v${systemVersion ?? ''}): use .tools/bin/node or put .tools/bin on PATH`,
    );
  });

  it('runs with the Node in .tools/bin', async () => {
    const result = await execa(join(projectRoot, '.tools/bin/node'), [main, 'version']);
    expect(result.stdout).toMatch(/^haptic \d+\.\d+\.\d+/);
  });
});
