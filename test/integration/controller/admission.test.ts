/**
 * Admission of Ingresses and HAProxyTemplateConfigs by the controller's own webhook, as the
 * chart registers it: the API server calls the webhook Service, which routes to the controller
 * Pod. kubectl shows the controller's verdicts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

function dryRun(object: Record<string, unknown>) {
  return kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
}

function route(host: string, path: string) {
  return {
    host,
    http: {
      paths: [
        { path, pathType: 'Prefix', backend: { service: { name: 'alpha', port: { number: 80 } } } },
      ],
    },
  };
}

interface TemplateConfigObject extends Record<string, unknown> {
  spec: { haproxyConfig: { template: string } } & Record<string, unknown>;
}

/** The installed HAProxyTemplateConfig, without server-set fields, ready for a dry-run apply. */
async function templateConfig(): Promise<TemplateConfigObject> {
  const got = await kubectl([
    'get',
    'haproxytemplateconfig',
    'haptic',
    '-n',
    site.namespace,
    '-o',
    'json',
  ]);
  const object = JSON.parse(got.stdout) as TemplateConfigObject;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name: 'haptic', namespace: site.namespace },
    spec: object.spec,
  };
}

beforeAll(async () => {
  site = await LocalSite.start('ctl-adm', { webhook: true });
  await site.addBackend('alpha');
  // The API server picks registrations up asynchronously: wait for a denial.
  const probe = site.ingress('probe', [route('probe.example.com', '/a b')]);
  await eventually(
    'the registered webhook denies',
    () => dryRun(probe),
    (result) => result.stderr.includes('denied'),
  );
}, 180_000);

afterAll(async () => {
  await site.stop();
});

describe('admission of routing objects by haptic run', () => {
  it('allows a valid Ingress', async () => {
    const result = await dryRun(site.ingress('fine', [route('fine.example.com', '/')]));
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it.each([
    [
      'a "#" and a newline in a path',
      (site0: LocalSite) => site0.ingress('p', [route('x.example.com', '/x#\nlua-load /tmp/x')]),
      'spec.rules[0].http.paths[0].path',
    ],
    [
      'a resource backend',
      (site0: LocalSite) =>
        site0.ingress('r', [
          {
            host: 'r.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { resource: { apiGroup: 'example.com', kind: 'Bucket', name: 'b' } },
                },
              ],
            },
          },
        ]),
      'spec.rules[0].http.paths[0].backend',
    ],
    [
      'a lua-load in a template annotation',
      (site0: LocalSite) => ({
        ...site0.ingress('a', [route('x.example.com', '/')]),
        metadata: {
          name: 'a',
          namespace: site0.namespace,
          annotations: { 'haproxy-haptic.org/x': 'y\nlua-load /tmp/x.lua' },
        },
      }),
      'haproxy-haptic.org/x',
    ],
  ] as const)('denies an Ingress with %s, naming the field', async (_what, make, field) => {
    const result = await dryRun(make(site));
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('denied the request');
    expect(result.stderr).toContain(field);
  });

  it('denies an Ingress whose TLS Secret holds no usable certificate', async () => {
    await site.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'broken', namespace: site.namespace },
      data: {
        'tls.crt': Buffer.from('not a certificate').toString('base64'),
        'tls.key': Buffer.from('nor a key').toString('base64'),
      },
    });
    // The controller's Secret informer sees it shortly after the write.
    const result = await eventually(
      'the denial naming the Secret',
      () =>
        dryRun(
          site.ingress('tls', [route('tls.example.com', '/')], {
            tls: [{ hosts: ['tls.example.com'], secretName: 'broken' }],
          }),
        ),
      (answer) => answer.stderr.includes('broken'),
    );
    expect(result.stderr).toContain('denied the request');
    expect(result.stderr).toContain('Secret');
    expect(result.stderr).toContain('broken');
  });

  it('denies a HAProxyTemplateConfig that loads Lua, and one HAProxy rejects, with the message', async () => {
    const config = await templateConfig();
    const lua = structuredClone(config);
    lua.spec.haproxyConfig.template = config.spec.haproxyConfig.template.replace(
      'global\n',
      'global\n  lua-load /tmp/evil.lua\n',
    );
    const luaLine = config.spec.haproxyConfig.template.split('\n').indexOf('global') + 2;
    const luaResult = await dryRun(lua);
    expect(luaResult.stderr).toContain('denied the request');
    expect(luaResult.stderr).toContain(
      `line ${String(luaLine)}: "lua-load" is not allowed: it loads and runs Lua code; remove it from the template.`,
    );

    // A line the template renders for an empty cluster (a proposed template sees no other).
    const bad = structuredClone(config);
    bad.spec.haproxyConfig.template = config.spec.haproxyConfig.template.replace(
      'defaults\n',
      'defaults\n  balance bogus\n',
    );
    const badResult = await dryRun(bad);
    // kubectl echoes the object it sent; the controller's answer follows "denied the request".
    const denial = badResult.stderr.slice(badResult.stderr.indexOf('denied the request'));
    expect(denial).toMatch(
      /\[ALERT\] haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm HAProxy does not support/,
    );
    // HAProxy's own wording ("'balance' only supports 'roundrobin', ...") is not passed on.
    expect(denial).not.toContain('only supports');

    // A line only an Ingress's backend renders: allowed at admission whatever Ingresses exist,
    // since the answer must not depend on other tenants' objects; the reconciler reports it
    // in the HAProxyTemplateConfig's status when it is applied (check-sandbox.test.ts).
    await site.apply(site.ingress('needs-backend', [route('b.example.com', '/')]));
    const objectsOnly = structuredClone(config);
    objectsOnly.spec.haproxyConfig.template = config.spec.haproxyConfig.template.replace(
      'balance {{ backend.options.balance }}',
      'balance bogus',
    );
    expect((await dryRun(objectsOnly)).exitCode).toBe(0);

    const fine = await dryRun(config);
    expect(fine.exitCode).toBe(0);
    expect(fine.stderr).not.toContain('denied');
  });
});
