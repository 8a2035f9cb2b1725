/**
 * `haptic ingress lint` as a user runs it: the real CLI on YAML files written to a temporary
 * directory, its report on stdout and its exit code (0 served, 1 refused, invalid, left out or
 * excluded, 2 usage or a file that cannot be read).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';

const dir = mkdtempSync(join(tmpdir(), 'ingress-lint-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function lint(args: readonly string[], input?: string) {
  return execa(
    process.execPath,
    [join(projectRoot, 'src/cli/main.ts'), 'ingress', 'lint', ...args],
    {
      reject: false,
      ...(input === undefined ? {} : { input }),
    },
  );
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** An Ingress of one rule with these annotations (YAML lines) and this path. */
function ingress(name: string, annotations: readonly string[], path = '/'): string {
  return [
    'apiVersion: networking.k8s.io/v1',
    'kind: Ingress',
    'metadata:',
    `  name: ${name}`,
    '  namespace: shop',
    '  annotations:',
    ...annotations.map((line) => `    ${line}`),
    'spec:',
    '  ingressClassName: haptic',
    '  tls: [{ hosts: [web.example.com], secretName: web-tls }]',
    '  rules:',
    '    - host: web.example.com',
    '      http:',
    '        paths:',
    `          - path: ${JSON.stringify(path)}`,
    '            pathType: ImplementationSpecific',
    '            backend: { service: { name: web, port: { number: 80 } } }',
  ].join('\n');
}

const service = 'apiVersion: v1\nkind: Service\nmetadata: { name: web, namespace: shop }\n';

describe('haptic ingress lint', () => {
  it('passes an Ingress migrating with rewrite-target, use-regex and ssl-redirect, skipping the Service', async () => {
    const path = file(
      'migrating.yaml',
      `${service}---\n${ingress(
        'web',
        [
          'nginx.ingress.kubernetes.io/rewrite-target: /$2',
          'nginx.ingress.kubernetes.io/use-regex: "true"',
          'nginx.ingress.kubernetes.io/ssl-redirect: "true"',
        ],
        '/app(/|$)(.*)',
      )}\n`,
    );
    const result = await lint([path]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`Ingress shop/web (${path}, document 2): served`);
    expect(lines).toContain(
      '  served differently  nginx.ingress.kubernetes.io/use-regex="true": Only this Ingress\'s paths become regular expressions (ingress-nginx makes every path of the host one, whichever Ingress has it), matched case-insensitively from the path\'s start as ingress-nginx does.',
    );
    expect(result.stdout).toContain('nginx.ingress.kubernetes.io/rewrite-target="/$2": ');
    expect(result.stdout).toContain('nginx.ingress.kubernetes.io/ssl-redirect="true": ');
    expect(lines.at(-1)).toBe(
      '1 Ingress checked: 1 pass, 0 with an annotation refused or invalid, a path left out or the whole Ingress excluded; 1 other object skipped.',
    );
  });

  it('fails an Ingress with a configuration-snippet, saying it is refused', async () => {
    const path = file(
      'snippet.yaml',
      ingress('snippet', [
        'nginx.ingress.kubernetes.io/configuration-snippet: |',
        '  more_set_headers "X-A: b";',
      ]),
    );
    const result = await lint([path]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(`Ingress shop/snippet (${path}): routes left out`);
    expect(result.stdout).toContain(
      '  refused             nginx.ingress.kubernetes.io/configuration-snippet="more_set_headers \\"X-A: b\\";\\n": The Ingress\'s routes are left out: it is free text',
    );
  });

  it('fails an Ingress with proxy-body-size "huge", saying the form it should have', async () => {
    const path = file(
      'huge.yaml',
      ingress('huge', ['nginx.ingress.kubernetes.io/proxy-body-size: huge']),
    );
    const result = await lint([path]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(
      '  invalid             nginx.ingress.kubernetes.io/proxy-body-size="huge": Expected bytes with an optional k, m or g ("1m", "512k", "0" for no limit)',
    );
  });

  it('reads the items of a List from standard input, in the namespace given', async () => {
    const list = `apiVersion: v1\nkind: List\nitems:\n${['- apiVersion: networking.k8s.io/v1', '  kind: Ingress', '  metadata: { name: plain }', '  spec: { defaultBackend: { service: { name: web, port: { number: 80 } } } }'].join('\n')}\n`;
    const result = await lint(['-n', 'team', '-'], list);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('Ingress team/plain (-, item 1): served');
  });

  it('exits 2 for a file that cannot be read or parsed, printing no report', async () => {
    const folder = join(dir, 'a-directory');
    mkdirSync(folder);
    const good = file('good.yaml', ingress('good', ['nginx.ingress.kubernetes.io/app-root: /app']));
    const unreadable = await lint([good, folder]);
    expect(unreadable.exitCode).toBe(2);
    expect(unreadable.stdout).toBe('');
    expect(unreadable.stderr).toMatch(
      /^haptic ingress lint: .*a-directory cannot be read \(EISDIR/,
    );
    const broken = await lint([file('broken.yaml', 'kind: Ingress\n  metadata: [\n')]);
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toMatch(/broken\.yaml is not valid YAML \(.*\); fix the syntax\.$/);
    expect((await lint([])).exitCode).toBe(2);
  });
});
