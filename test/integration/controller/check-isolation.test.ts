/**
 * One tenant's object never blocks the others at the check: the controller's pipeline (render
 * process, lint, `haproxy -c` in the check sandbox) with the chart's default templates plus a
 * backend per Ingress carrying its `haproxy-haptic.org/timeout` annotation. HAProxy is real;
 * nothing here knows which line fails but HAProxy's own answer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import type { ApplyFile } from '../../../src/agent-api/apply-encoding.ts';
import type {
  ClusterSnapshot,
  SecretView,
} from '../../../src/controller/routing/cluster-snapshot.ts';
import { ConfigPipeline } from '../../../src/controller/pipeline/config-pipeline.ts';
import { type IngressView, readIngress } from '../../../src/validation/ingress-view.ts';
import { anyRangeEndpointRules } from '../../../src/validation/endpoint-addresses.ts';

const tmp = mkdtempSync(join(tmpdir(), 'check-isolation-'));
let sandbox: LocalSandbox;
let pipeline: ConfigPipeline;

beforeAll(async () => {
  sandbox = await startLocalSandbox({ dir: join(tmp, 'sandbox') });
  pipeline = new ConfigPipeline({ ingressClass: 'haptic', check: { socket: sandbox.socket } });
}, 60_000);

afterAll(async () => {
  await pipeline.close();
  await sandbox.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const chartFile = (name: string) =>
  readFileSync(join(projectRoot, 'chart/files/default-template', name), 'utf8');

const annotationBackends = `
{% for ingress in ingresses %}{% if ingress.annotations.timeout %}
backend timeout_{{ ingress.namespace }}_{{ ingress.name }}
  timeout server {{ ingress.annotations.timeout }}
{% endif %}{% endfor %}`;

/** The stored object; a different `edit` is a different resourceVersion, as in the API. */
function templateConfig(
  edit: (template: string) => string = (template) => template,
  resourceVersion = '1',
) {
  return {
    apiVersion: 'haproxy-haptic.org/v1alpha1',
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic', uid: 'u1', resourceVersion },
    spec: {
      haproxyConfig: { template: edit(chartFile('haproxy.cfg.liquid') + annotationBackends) },
      maps: {
        'exact.map': { template: chartFile('exact.map.liquid') },
        'prefix.map': { template: chartFile('prefix.map.liquid') },
      },
      certificateLists: {
        'certificates.list': { template: chartFile('certificates.list.liquid') },
      },
    },
  };
}

function ingress(
  namespace: string,
  name: string,
  extra: { timeout?: string; secret?: string; moreTlsHosts?: readonly string[] } = {},
) {
  const host = `${name}.${namespace}.example.com`;
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace,
      name,
      ...(extra.timeout === undefined
        ? {}
        : { annotations: { 'haproxy-haptic.org/timeout': extra.timeout } }),
    },
    spec: {
      ...(extra.secret === undefined
        ? {}
        : { tls: [{ hosts: [host, ...(extra.moreTlsHosts ?? [])], secretName: extra.secret }] }),
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

/** A kubernetes.io/tls Secret made by openssl: `key` as `openssl req -newkey` or a CA-signed leaf. */
function tlsSecret(
  namespace: string,
  name: string,
  kind: 'p256' | 'rsa1024' | 'x25519',
): SecretView {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  const file = (f: string) => join(dir, f);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const subject = ['-subj', `/CN=${name}`, '-days', '2'];
  if (kind === 'x25519') {
    // An X25519 key cannot sign, so a P-256 CA issues the leaf for it.
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.crt'),
      ...subject,
    );
    openssl('genpkey', '-algorithm', 'X25519', '-out', file('tls.key'));
    openssl('pkey', '-in', file('tls.key'), '-pubout', '-out', file('tls.pub'));
    openssl(
      'req',
      '-new',
      '-key',
      file('ca.key'),
      '-subj',
      `/CN=${name}`,
      '-out',
      file('leaf.csr'),
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file('leaf.csr'),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-force_pubkey',
      file('tls.pub'),
      '-days',
      '2',
      '-out',
      file('tls.crt'),
    );
  } else {
    const key = kind === 'p256' ? ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['rsa:1024'];
    openssl(
      'req',
      '-x509',
      '-newkey',
      ...key,
      '-nodes',
      '-keyout',
      file('tls.key'),
      '-out',
      file('tls.crt'),
      ...subject,
    );
  }
  const data = (f: string) => readFileSync(file(f)).toString('base64');
  return { namespace, name, data: { 'tls.crt': data('tls.crt'), 'tls.key': data('tls.key') } };
}

function snapshotOf(
  ingresses: readonly IngressView[],
  secrets: readonly SecretView[] = [],
): ClusterSnapshot {
  const namespaces = [...new Set(ingresses.map((view) => view.namespace))];
  return {
    ingresses,
    services: new Map(
      namespaces.map((namespace) => [
        `${namespace}/web`,
        { namespace, name: 'web', ports: [{ name: 'http', port: 80 }] },
      ]),
    ),
    endpointSlices: new Map(
      namespaces.map((namespace, i) => [
        `${namespace}/web`,
        [
          {
            namespace,
            name: 'web-1',
            serviceName: 'web',
            addressType: 'IPv4',
            ports: [{ name: 'http', port: 8080 }],
            endpoints: [{ addresses: [`10.0.${i}.1`], ready: true }],
          },
        ],
      ]),
    ),
    secrets: new Map(secrets.map((secret) => [`${secret.namespace}/${secret.name}`, secret])),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  };
}

const text = (files: readonly ApplyFile[], path: string) =>
  Buffer.from(files.find((file) => file.path === path)?.content ?? '').toString();

describe('the pipeline leaves out the Ingresses whose lines haproxy -c rejects', () => {
  it("delivers namespace b's Ingress when namespace a's annotation makes a line the lint refuses", async () => {
    const snapshot = snapshotOf([
      ingress('a', 'sly', { timeout: '5s file /etc/passwd' }),
      ingress('b', 'good', { timeout: '5s' }),
    ]);
    const outcome = await pipeline.run(templateConfig(), snapshot, new Date());
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.model.excluded).toEqual([
      expect.objectContaining({
        namespace: 'a',
        name: 'sly',
        field: 'metadata.annotations["haproxy-haptic.org/timeout"]',
      }),
    ]);
    expect(outcome.model.excluded[0]?.message).toMatch(
      /^Ingress a\/sly is not served: the allow-list lint refuses the line of haproxy\.cfg made from its annotation haproxy-haptic\.org\/timeout .*"file \/etc\/passwd" names a file outside/,
    );
    const cfg = text(outcome.files, 'haproxy.cfg');
    expect(cfg).toContain('timeout server 5s\n');
    expect(cfg).not.toContain('/etc/passwd');
  });

  it('fails the whole configuration when the lint refuses a line of the template itself', async () => {
    const outcome = await pipeline.run(
      templateConfig(
        (template) => template.replace('global\n', 'global\n  lua-load files/x.lua\n'),
        '7',
      ),
      snapshotOf([ingress('b', 'good', { timeout: '5s' })]),
      new Date(),
    );
    expect(outcome).toMatchObject({ ok: false, stage: 'lint' });
    expect(outcome.ok ? '' : outcome.message).toContain('"lua-load" is not allowed');
    expect(outcome.model?.excluded).toEqual([]);
  });

  it("delivers namespace b's Ingress when namespace a's annotation lands where HAProxy refuses it", async () => {
    const snapshot = snapshotOf([
      ingress('a', 'bad', { timeout: '5parsecs' }),
      ingress('b', 'good', { timeout: '5s' }),
    ]);
    const outcome = await pipeline.run(templateConfig(), snapshot, new Date());
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.model.excluded).toEqual([
      {
        namespace: 'a',
        name: 'bad',
        field: 'metadata.annotations["haproxy-haptic.org/timeout"]',
        message:
          'Ingress a/bad is not served: haproxy -c rejects the line of haproxy.cfg made from its annotation haproxy-haptic.org/timeout (metadata.annotations["haproxy-haptic.org/timeout"]): has an invalid time value (a number with a unit, such as 5s). To be served again, change the annotation to a value the template can use; the other Ingresses are served without it.',
      },
    ]);
    expect(outcome.model.model.ingresses.map((view) => `${view.namespace}/${view.name}`)).toEqual([
      'b/good',
    ]);
    const cfg = text(outcome.files, 'haproxy.cfg');
    expect(cfg).toContain('timeout server 5s');
    expect(cfg).not.toContain('5parsecs');
    expect(text(outcome.files, 'maps/prefix.map')).not.toContain('bad.a.example.com');

    // Same inputs, same bytes: again, and from a fresh pipeline (and render process).
    const again = await pipeline.run(templateConfig(), snapshot, new Date());
    const fresh = new ConfigPipeline({ ingressClass: 'haptic', check: { socket: sandbox.socket } });
    try {
      const other = await fresh.run(templateConfig(), snapshot, new Date());
      expect(again.ok && again.digest).toBe(outcome.digest);
      expect(other.ok && other.digest).toBe(outcome.digest);
    } finally {
      await fresh.close();
    }
  });

  it.each([
    ['an RSA-1024 key', 'rsa1024'],
    ['an X25519 leaf', 'x25519'],
  ] as const)(
    'keeps serving the others when a TLS Secret holds %s, which HAProxy cannot load',
    async (_what, kind) => {
      const snapshot = snapshotOf(
        [ingress('a', 'weak', { secret: 'weak-tls' }), ingress('b', 'strong', { secret: 'tls' })],
        [tlsSecret('a', 'weak-tls', kind), tlsSecret('b', 'tls', 'p256')],
      );
      const outcome = await pipeline.run(templateConfig(), snapshot, new Date());
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return;
      // The routing model keeps such a Secret away from HAProxy (its hosts get the default
      // certificate, with a warning); were it to reach HAProxy, the crt-list line would
      // leave out its Ingress (see check-failure-culprits.test.ts).
      const excluded = outcome.model.excluded.map((entry) => `${entry.namespace}/${entry.name}`);
      const warned = outcome.model.warnings.map((warning) => warning.ingress);
      expect([...excluded, ...warned]).toContain('a/weak');
      const list = text(outcome.files, 'ssl/certificates.list');
      expect(list).toMatch(/strong\.b\.example\.com/);
      expect(list).not.toMatch(/weak/);
    },
  );

  it('serves a certificate with more TLS hosts than one crt-list line of HAProxy holds', async () => {
    // 2,047 words or 65,535 characters end a crt-list line for HAProxy; past them it refused
    // the whole configuration, every tenant's included.
    const many = Array.from({ length: 2_100 }, (_, i) => `h${String(i)}.${'x'.repeat(40)}.example`);
    const snapshot = snapshotOf(
      [
        ingress('a', 'many', { secret: 'tls', moreTlsHosts: many }),
        ingress('b', 'good', { secret: 'tls' }),
      ],
      [tlsSecret('a', 'tls', 'p256'), tlsSecret('b', 'tls', 'p256')],
    );
    const outcome = await pipeline.run(templateConfig(), snapshot, new Date());
    expect(outcome.ok ? outcome.model.excluded : outcome.message).toEqual([]);
    if (!outcome.ok) return;
    const lines = text(outcome.files, 'ssl/certificates.list').trimEnd().split('\n');
    const ofA = lines.filter((line) => line.startsWith('ssl/a_tls.pem '));
    expect(ofA.length).toBeGreaterThan(2);
    for (const line of lines) {
      expect(line.split(' ').length).toBeLessThan(2047);
      expect(line.length).toBeLessThan(65_535);
    }
    const hostsOfA = ofA.flatMap((line) => line.split(' ').slice(1));
    expect(hostsOfA.sort()).toEqual([...many, 'many.a.example.com'].sort());
    expect(lines.some((line) => line.startsWith('ssl/b_tls.pem good.b.example.com'))).toBe(true);
  });

  it('fails the whole configuration, as before, when the template itself is wrong', async () => {
    const broken = templateConfig(
      (template) =>
        template.replace('balance {{ backend.options.balance }}', 'balance no-such-algorithm'),
      '2',
    );
    const snapshot = snapshotOf([ingress('a', 'one'), ingress('b', 'two')]);
    const outcome = await pipeline.run(broken, snapshot, new Date());
    expect(outcome).toMatchObject({
      ok: false,
      stage: 'check',
      field: 'spec.haproxyConfig.template',
    });
    expect(outcome.ok ? '' : outcome.message).toMatch(
      /haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm/,
    );
    expect(outcome.model?.excluded).toEqual([]);
  });

  it('fails the whole configuration when leaving out the one Ingress would be all there is', async () => {
    const outcome = await pipeline.run(
      templateConfig(),
      snapshotOf([ingress('a', 'alone', { timeout: '5parsecs' })]),
      new Date(),
    );
    expect(outcome).toMatchObject({ ok: false, stage: 'check' });
    expect(outcome.ok ? '' : outcome.message).toMatch(
      /haproxy\.cfg:\d+: 'timeout server' has an invalid time value/,
    );
  });
});

describe('rendering under limits', () => {
  it('ends a 20,000,000 range within the deadline of a review, and renders the next one', async () => {
    const hostile = templateConfig(
      (template) => `{% for i in (1..20000000) %}{% endfor %}${template}`,
    );
    const snapshot = snapshotOf([ingress('b', 'good')]);
    const started = performance.now();
    const outcome = await pipeline.run(hostile, snapshot, new Date(), {
      proposed: true,
      deadlineMs: 1_500,
    });
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(outcome).toMatchObject({
      ok: false,
      stage: 'template',
      field: 'spec.haproxyConfig.template',
    });
    const next = await pipeline.run(templateConfig(), snapshot, new Date());
    expect(next.ok).toBe(true);
  });
});
