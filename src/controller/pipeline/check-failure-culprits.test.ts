import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkFailureCulprits } from './check-failure-culprits.ts';
import { reduceHaproxyMessage } from '../../haproxy/message.ts';
import { checkFailureLocations } from '../render/check-failure-locations.ts';
import type {
  ClusterSnapshot,
  EndpointSliceView,
  SecretView,
} from '../routing/cluster-snapshot.ts';
import { buildRoutingModel } from '../routing/routing-model.ts';
import { readTemplateConfig } from '../../api/template-config.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../render/template-engine.ts';
import { readIngress } from '../../validation/ingress-view.ts';
import { anyRangeEndpointRules } from '../../validation/endpoint-addresses.ts';

const now = new Date();
const tmp = mkdtempSync(join(tmpdir(), 'culprits-'));
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function tlsSecret(namespace: string, name: string): SecretView {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt'), '-days', '2'],
      ...['-subj', `/CN=${name}`],
    ],
    { stdio: 'ignore' },
  );
  const data = (file: string) => readFileSync(join(dir, file)).toString('base64');
  return { namespace, name, data: { 'tls.crt': data('tls.crt'), 'tls.key': data('tls.key') } };
}

interface IngressSpec {
  readonly namespace: string;
  readonly name: string;
  readonly host: string;
  readonly service: string;
  readonly secret?: string;
  readonly timeout?: string;
}

function ingress(spec: IngressSpec) {
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace: spec.namespace,
      name: spec.name,
      ...(spec.timeout === undefined
        ? {}
        : { annotations: { 'haproxy-haptic.org/timeout': spec.timeout } }),
    },
    spec: {
      rules: [
        {
          host: spec.host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: spec.service, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
      ...(spec.secret === undefined
        ? {}
        : { tls: [{ hosts: [spec.host], secretName: spec.secret }] }),
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

function slice(namespace: string, service: string, address: string): EndpointSliceView {
  return {
    namespace,
    name: `${service}-1`,
    serviceName: service,
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: [address], ready: true }],
  };
}

const secrets = [tlsSecret('app', 'shared-tls'), tlsSecret('team', 'blog-tls')];
const specs: readonly IngressSpec[] = [
  {
    namespace: 'app',
    name: 'shop',
    host: 'shop.example.com',
    service: 'web',
    secret: 'shared-tls',
    timeout: '5s',
  },
  {
    namespace: 'app',
    name: 'cart',
    host: 'cart.example.com',
    service: 'web',
    secret: 'shared-tls',
  },
  {
    namespace: 'team',
    name: 'blog',
    host: 'blog.example.com',
    service: 'blog',
    secret: 'blog-tls',
    timeout: '5parsecs',
  },
  { namespace: 'team', name: 'docs', host: 'docs.example.com', service: 'docs', timeout: '7s' },
];
const services = [
  ['app', 'web', '10.0.0.1'],
  ['team', 'blog', '10.0.0.2'],
  ['team', 'docs', '10.0.0.3'],
] as const;

function snapshotOf(selected: readonly IngressSpec[]): ClusterSnapshot {
  return {
    ingresses: selected.map(ingress),
    services: new Map(
      services.map(([namespace, name]) => [
        `${namespace}/${name}`,
        { namespace, name, ports: [{ name: 'http', port: 80 }] },
      ]),
    ),
    endpointSlices: new Map(
      services.map(([namespace, name, address]) => [
        `${namespace}/${name}`,
        [slice(namespace, name, address)],
      ]),
    ),
    secrets: new Map(secrets.map((secret) => [`${secret.namespace}/${secret.name}`, secret])),
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  };
}

const chartTemplate = (name: string): string =>
  readFileSync(join(import.meta.dirname, '../../../chart/files/default-template', name), 'utf8');

/** The chart's default template, plus a backend per Ingress with its timeout annotation. */
const annotationBlock = `
{% for ingress in ingresses %}{% if ingress.annotations.timeout %}
backend timeout_{{ ingress.namespace }}_{{ ingress.name }}
  timeout server {{ ingress.annotations.timeout }}
{% endif %}{% endfor %}`;

function rendered(
  selected: readonly IngressSpec[] = specs,
  edit: (template: string) => string = (template) => template,
) {
  const snapshot = snapshotOf(selected);
  const result = buildRoutingModel(snapshot, { now });
  const config = readTemplateConfig({
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic' },
    spec: {
      haproxyConfig: { template: edit(chartTemplate('haproxy.cfg.liquid') + annotationBlock) },
      maps: {
        'exact.map': { template: chartTemplate('exact.map.liquid') },
        'prefix.map': { template: chartTemplate('prefix.map.liquid') },
      },
      certificateLists: {
        'certificates.list': { template: chartTemplate('certificates.list.liquid') },
      },
    },
  });
  if ('message' in config) throw new Error(config.message);
  const engine = createTemplateEngine();
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  const output = renderTemplates(engine, parsed, templateContext(result.model, 'haptic'));
  if (!output.ok) throw new Error(output.message);
  const files = new Map(result.files);
  for (const file of output.files) files.set(file.path, file.content);
  return { files, model: result.model, ingresses: snapshot.ingresses };
}

/** 1-based numbers of the lines of `text` that contain `needle`. */
function linesWith(text: string | undefined, needle: string): number[] {
  return (text ?? '').split('\n').flatMap((line, i) => (line.includes(needle) ? [i + 1] : []));
}

/** HAProxy's alerts as the check hands them on: reduced, then located. */
function culprits(alerts: readonly string[], state: ReturnType<typeof rendered> = rendered()) {
  const config = state.files.get('haproxy.cfg') ?? '';
  const message = reduceHaproxyMessage(alerts.join('\n'), { config });
  return checkFailureCulprits({ ...state, locations: checkFailureLocations(message) });
}

const excludedNames = (verdict: ReturnType<typeof culprits>) =>
  verdict.blame === 'ingresses'
    ? verdict.excluded.map((entry) => `${entry.namespace}/${entry.name} ${entry.field}`)
    : `${verdict.reason}: ${verdict.message}`;

describe('checkFailureCulprits', () => {
  const state = rendered();
  const cfg = state.files.get('haproxy.cfg');
  const list = state.files.get('ssl/certificates.list');
  const certificateOf = (secret: string) =>
    state.model.certificates.find((certificate) => certificate.secret === secret)?.file ?? '';
  const bindLine = linesWith(cfg, 'crt-list')[0] ?? 0;
  const crtListAlert = (secret: string) => {
    const file = certificateOf(secret);
    return `[ALERT] config : parsing [haproxy.cfg:${bindLine}] : 'bind :8443' in section 'frontend' : 'crt-list' : error processing line ${linesWith(list, file)[0] ?? 0} in file 'ssl/certificates.list' : unable to load SSL certificate into SSL Context '${file}'.`;
  };

  it('names the Ingress whose TLS Secret HAProxy cannot load, by the crt-list line', () => {
    const verdict = culprits([crtListAlert('team/blog-tls')], state);
    expect(excludedNames(verdict)).toEqual(['team/blog spec.tls[0].secretName']);
    expect(verdict.blame === 'ingresses' && verdict.excluded[0]?.message).toBe(
      `Ingress team/blog is not served: haproxy -c rejects the line of ssl/certificates.list made from its TLS Secret team/blog-tls (spec.tls[0].secretName): cannot load a certificate, key or crt-list it names. To be served again, give the Secret a certificate and key HAProxy can load; the other Ingresses are served without it.`,
    );
  });

  it('names every Ingress that uses a certificate HAProxy cannot load', () => {
    expect(excludedNames(culprits([crtListAlert('app/shared-tls')], state))).toEqual([
      'app/cart spec.tls[0].secretName',
      'app/shop spec.tls[0].secretName',
    ]);
  });

  it('names the Ingress whose annotation a template wrote where HAProxy refuses it', () => {
    const line = linesWith(cfg, 'timeout server 5parsecs')[0] ?? 0;
    const verdict = culprits(
      [
        `[ALERT] config : parsing [haproxy.cfg:${line}] : unexpected character 'p' in 'timeout server'`,
      ],
      state,
    );
    expect(excludedNames(verdict)).toEqual([
      'team/blog metadata.annotations["haproxy-haptic.org/timeout"]',
    ]);
  });

  it('names the Ingress of a map line by its key, not every Ingress of the shared Service', () => {
    const map = state.files.get('maps/prefix.map');
    const line = linesWith(map, 'shop.example.com/')[0] ?? 0;
    const verdict = culprits(
      [
        `[ALERT] config : parsing [haproxy.cfg:9] : error detected in frontend 'http' while parsing 'http-request set-var(txn.backend)' rule : invalid args in converter 'map_beg' : bad key at line ${line} of file 'maps/prefix.map'.`,
      ],
      state,
    );
    expect(excludedNames(verdict)).toEqual(['app/shop spec.rules[0].http.paths[0].path']);
  });

  it('names the Ingresses of one server line whose endpoint HAProxy refuses', () => {
    const line = linesWith(cfg, '10.0.0.2:8080')[0] ?? 0;
    expect(
      excludedNames(
        culprits(
          [`[ALERT] config : parsing [haproxy.cfg:${line}] : 'server s1' : invalid address`],
          state,
        ),
      ),
    ).toEqual(['team/blog spec.rules[0].http.paths[0].backend.service']);
  });

  it('blames the template for a line that carries no value of an Ingress', () => {
    const broken = rendered(specs, (template) =>
      template.replace('balance {{ backend.options.balance }}', 'balance no-such-algorithm'),
    );
    const alerts = linesWith(broken.files.get('haproxy.cfg'), 'balance no-such').map(
      (line) =>
        `[ALERT] config : parsing [haproxy.cfg:${line}] : 'balance' only supports 'roundrobin', 'static-rr', 'leastconn', 'source', 'uri', 'url_param', 'hdr(name)' and 'rdp-cookie(name)' options.`,
    );
    expect(alerts.length).toBeGreaterThan(1);
    expect(excludedNames(culprits(alerts, broken))).toMatch(
      /^NoIngressValue: haproxy\.cfg:\d+ carries no value of an Ingress\.$/,
    );
  });

  it('blames the template when every line written like the failing one fails', () => {
    const broken = rendered(specs, (template) =>
      // A template of its own: every endpoint on a server line of the same shape.
      template
        .replace('for slot in backend.slots', 'for server in backend.servers')
        .replace(
          "server {{ slot.name }} {{ slot.endpoint }}{% case backend.protocol %}{% when 'HTTPS' %} ssl verify none{% when 'GRPCS' %} ssl verify none alpn h2{% when 'GRPC', 'H2C' %} proto h2{% endcase %}{% if backend.options.affinity %} cookie {{ slot.name }}{% endif %}{% if slot.spare %} disabled{% endif %}",
          'server {{ server.name }} {{ server.endpoint }} bogus',
        ),
    );
    const alerts = linesWith(broken.files.get('haproxy.cfg'), ' bogus').map(
      (line) =>
        `[ALERT] config : parsing [haproxy.cfg:${line}] : 'server s1' unknown keyword 'bogus'.`,
    );
    expect(alerts).toHaveLength(3);
    expect(excludedNames(culprits(alerts, broken))).toMatch(
      /^EveryLineAlike: every line written like haproxy.cfg:\d+ fails/,
    );
  });

  it('blames the template for a line HAProxy names that is not in the files', () => {
    expect(
      excludedNames(
        culprits(["[ALERT] config : parsing [files/nope:3] : unknown keyword 'x'"], state),
      ),
    ).toBe('LineNotRendered: files/nope:3 is not a line of the rendered files.');
  });

  it('blames the template rather than leave out every Ingress', () => {
    const alone = rendered(specs.filter((spec) => spec.name === 'blog'));
    const line = linesWith(alone.files.get('haproxy.cfg'), 'timeout server 5parsecs')[0] ?? 0;
    expect(
      excludedNames(
        culprits(
          [
            `[ALERT] config : parsing [haproxy.cfg:${line}] : unexpected character 'p' in 'timeout server'`,
          ],
          alone,
        ),
      ),
    ).toBe('EveryIngressNamed: it would leave out every Ingress.');
  });

  it('finds a file HAProxy names under the directory the check ran in', () => {
    const line = linesWith(cfg, 'timeout server 5parsecs')[0] ?? 0;
    expect(
      excludedNames(
        culprits(
          [
            `[ALERT] config : parsing [/tmp/check-x1/haproxy.cfg:${line}] : unexpected character 'p' in 'timeout server'`,
          ],
          state,
        ),
      ),
    ).toEqual(['team/blog metadata.annotations["haproxy-haptic.org/timeout"]']);
  });
});
