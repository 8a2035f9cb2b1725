/**
 * `haptic preflight` refuses a release whose own HAProxyTemplateConfig renders lines the
 * allow-list refuses, before anything rolls (the pre-rollout Job), and accepts the chart's
 * default template. Runs the real CLI offline on a copy of the chart.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';

const dir = mkdtempSync(join(tmpdir(), 'preflight-template-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function preflight(chart: string) {
  return execa(
    process.execPath,
    [join(projectRoot, 'src/cli/main.ts'), 'preflight', '--offline', '--chart', chart],
    {
      reject: false,
      env: { PATH: join(projectRoot, '.tools/bin') + ':' + (process.env.PATH ?? '') },
    },
  );
}

describe('preflight and the release HAProxyTemplateConfig', () => {
  it('refuses a template that loads Lua, naming the object, the line and the fix', async () => {
    const chart = join(dir, 'lua');
    cpSync(join(projectRoot, 'chart'), chart, { recursive: true });
    const template = join(chart, 'files/default-template/haproxy.cfg.liquid');
    const text = readFileSync(template, 'utf8');
    expect(text).toMatch(/^global$/m);
    writeFileSync(template, text.replace(/^global$/m, 'global\n  lua-load /tmp/evil.lua'));
    const result = await preflight(chart);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(
      'ERROR RenderedConfigForbidden (HAProxyTemplateConfig haptic spec.haproxyConfig.template): ',
    );
    expect(result.stdout).toMatch(
      /line \d+: "lua-load" is not allowed: it loads and runs Lua code; remove it from the template\./,
    );
  });

  it('lints the config of the whole output when the config parsed on its own differs', async () => {
    // The lint starts on the config parsed from its own document (found by its line
    // `kind: HAProxyTemplateConfig`); a quoted kind is not found there, only in the whole parse.
    const chart = join(dir, 'quoted-kind');
    cpSync(join(projectRoot, 'chart'), chart, { recursive: true });
    const config = join(chart, 'templates/haproxytemplateconfig.yaml');
    const text = readFileSync(config, 'utf8');
    expect(text).toContain('\nkind: HAProxyTemplateConfig\n');
    writeFileSync(
      config,
      text.replace('\nkind: HAProxyTemplateConfig\n', '\nkind: "HAProxyTemplateConfig"\n'),
    );
    const template = join(chart, 'files/default-template/haproxy.cfg.liquid');
    const liquid = readFileSync(template, 'utf8');
    writeFileSync(template, liquid.replace(/^global$/m, 'global\n  lua-load /tmp/evil.lua'));
    const result = await preflight(chart);
    expect(result.stdout).toContain('ERROR RenderedConfigForbidden (HAProxyTemplateConfig haptic');
    expect(result.exitCode).toBe(1);
  });

  it("accepts the chart's own template", async () => {
    const result = await preflight(join(projectRoot, 'chart'));
    expect(result.stdout).not.toContain('ERROR');
    expect(result.exitCode).toBe(0);
  });
});
