/**
 * Admission of Ingresses and HAProxyTemplateConfigs by the controller's own webhook (`haptic
 * run --webhook-cert-dir`), registered with the API server by URL for this test's namespace
 * (nothing here runs the chart's webhook Service). kubectl shows the controller's verdicts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/lib/free-port.ts';
import { kubectl } from '../../support/cluster.ts';
import { servingMaterial, webhookHost } from '../webhook/registered-webhook.ts';
import { LocalSite } from './local-site.ts';

let site: LocalSite;
let registration: string;

function rules(namespace: string, url: string, caPem: string) {
  const common = {
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    timeoutSeconds: 10,
    failurePolicy: 'Fail',
    clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') },
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: `haptic-test-${namespace}` },
    webhooks: [
      {
        ...common,
        name: 'ingresses.haptic.haproxy.org',
        rules: [
          {
            apiGroups: ['networking.k8s.io'],
            apiVersions: ['v1'],
            resources: ['ingresses'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
      },
      {
        ...common,
        name: 'haproxytemplateconfigs.haptic.haproxy.org',
        rules: [
          {
            apiGroups: ['haproxy-haptic.org'],
            apiVersions: ['v1alpha1'],
            resources: ['haproxytemplateconfigs'],
            operations: ['CREATE', 'UPDATE'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
}

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
  const material = await servingMaterial();
  const port = await freePort();
  const certDir = join(process.env.TMPDIR ?? '/tmp', `haptic-webhook-${String(port)}`);
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), material.certPem);
  writeFileSync(join(certDir, 'tls.key'), material.keyPem);
  site = await LocalSite.start('ctl-adm', 1, [
    `--webhook-cert-dir=${certDir}`,
    `--webhook-listen=${webhookHost}:${String(port)}`,
  ]);
  await site.addBackend('alpha');
  const body = rules(
    site.namespace,
    `https://${webhookHost}:${String(port)}/validate`,
    material.caPem,
  );
  registration = body.metadata.name;
  expect((await kubectl(['apply', '-f', '-'], JSON.stringify(body))).exitCode).toBe(0);
  // The API server picks registrations up asynchronously: wait for a denial.
  const probe = site.ingress('probe', [route('probe.example.com', '/a b')]);
  for (let i = 0; i < 100 && !(await dryRun(probe)).stderr.includes('denied'); i += 1)
    await sleep(200);
}, 180_000);

afterAll(async () => {
  await kubectl(['delete', 'validatingwebhookconfiguration', registration, '--ignore-not-found']);
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
    await sleep(500);
    const result = await dryRun(
      site.ingress('tls', [route('tls.example.com', '/')], {
        tls: [{ hosts: ['tls.example.com'], secretName: 'broken' }],
      }),
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

    const bad = structuredClone(config);
    bad.spec.haproxyConfig.template = config.spec.haproxyConfig.template.replace(
      'balance roundrobin',
      'balance bogus',
    );
    await site.apply(site.ingress('needs-backend', [route('b.example.com', '/')]));
    await sleep(500);
    const badResult = await dryRun(bad);
    // kubectl echoes the object it sent; the controller's answer follows "denied the request".
    const denial = badResult.stderr.slice(badResult.stderr.indexOf('denied the request'));
    expect(denial).toMatch(
      /\[ALERT\] haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm HAProxy does not support/,
    );
    // HAProxy's own wording ("'balance' only supports 'roundrobin', ...") is not passed on.
    expect(denial).not.toContain('only supports');

    const fine = await dryRun(config);
    expect(fine.exitCode).toBe(0);
    expect(fine.stderr).not.toContain('denied');
  });
});
