import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

beforeAll(async () => {
  site = await LocalSite.start('ctl');
  await site.addBackend('alpha');
  await site.addBackend('beta');
}, 180_000);

afterAll(async () => {
  await site.stop();
});

function route(host: string, path: string, pathType: string, service: string) {
  return {
    host,
    http: {
      paths: [{ path, pathType, backend: { service: { name: service, port: { number: 80 } } } }],
    },
  };
}

const all = (value: string) => (answers: string[]) => answers.every((answer) => answer === value);

async function controllerMetrics(): Promise<string> {
  return (await fetch(`http://${site.controllers[0]?.address ?? ''}:9090/metrics`)).text();
}

/** haptic_ingresses{state="excluded"}: the Ingresses the last render left out. */
function excluded(metrics: string): number {
  return Number(/^haptic_ingresses\{state="excluded"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
}

describe('haptic run against the chart, two HAProxy replicas and real agents', () => {
  it('serves an Ingress on both replicas over HTTPS, redirects HTTP to it (308), follows changes, and 404s after deletion', async () => {
    await site.tlsSecret('shop-tls', 'shop.example.com');
    await site.apply(
      site.ingress('shop', [route('shop.example.com', '/', 'Prefix', 'alpha')], {
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      }),
    );
    await eventually(
      'served by alpha',
      () => site.everywhere('shop.example.com', '/cart', ['https']),
      all('200 alpha /cart'),
    );
    // A TLS host's HTTP requests are redirected, query kept, as ingress-nginx's ssl-redirect.
    expect(await site.everywhere('shop.example.com', '/cart?item=1', ['http'])).toEqual(
      Array(2).fill('308 -> https://shop.example.com/cart?item=1'),
    );

    await site.apply(
      site.ingress('shop', [route('shop.example.com', '/', 'Prefix', 'beta')], {
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      }),
    );
    await eventually(
      'served by beta',
      () => site.everywhere('shop.example.com', '/cart', ['https']),
      all('200 beta /cart'),
    );

    expect((await kubectl(['delete', 'ingress', 'shop', '-n', site.namespace])).exitCode).toBe(0);
    await eventually(
      'gone',
      () => site.everywhere('shop.example.com', '/cart', ['http']),
      (answers) => answers.every((answer) => answer.startsWith('404 ')),
    );
  });

  it('routes Exact before Prefix and the longest prefix first', async () => {
    await site.apply(
      site.ingress('paths', [
        {
          host: 'paths.example.com',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'alpha', port: { number: 80 } } },
              },
              {
                path: '/api',
                pathType: 'Prefix',
                backend: { service: { name: 'beta', port: { number: 80 } } },
              },
              {
                path: '/api/exact',
                pathType: 'Exact',
                backend: { service: { name: 'alpha', port: { number: 80 } } },
              },
            ],
          },
        },
      ]),
    );
    const one = (path: string) =>
      eventually(
        path,
        () => site.everywhere('paths.example.com', path, ['http']),
        (a) => a.every((x) => x === a[0] && !x.startsWith('404')),
      );
    expect((await one('/api/v1'))[0]).toBe('200 beta /api/v1');
    expect((await one('/api'))[0]).toBe('200 beta /api');
    expect((await one('/api/exact'))[0]).toBe('200 alpha /api/exact');
    expect((await one('/apiary'))[0]).toBe('200 alpha /apiary');
  });

  it('leaves out hostile Ingresses with an Event, and keeps serving the rest', async () => {
    await site.apply(site.ingress('good', [route('good.example.com', '/', 'Prefix', 'alpha')]));
    await eventually(
      'good served',
      () => site.everywhere('good.example.com', '/', ['http']),
      all('200 alpha /'),
    );
    const hostile = [
      site.ingress('hash-path', [
        route('evil.example.com', '/x#\n  lua-load /tmp/x.lua', 'Prefix', 'alpha'),
      ]),
      site.ingress('lua-annotation', [route('evil2.example.com', '/', 'Prefix', 'alpha')]),
    ];
    const annotated = hostile[1] as { metadata: Record<string, unknown> };
    annotated.metadata.annotations = { 'haproxy-haptic.org/timeout': '5s\nlua-load /tmp/x.lua' };
    for (const object of hostile) await site.apply(object);
    const events = await eventually(
      'Events on both',
      async () =>
        (
          await kubectl([
            'get',
            'events',
            '-n',
            site.namespace,
            '--field-selector',
            'reason=IngressExcluded',
            '-o',
            'json',
          ])
        ).stdout,
      (text) => text.includes('hash-path') && text.includes('lua-annotation'),
    );
    expect(events).toContain('spec.rules[0].http.paths[0].path');
    expect(events).toContain('haproxy-haptic.org/timeout');
    expect(await site.everywhere('good.example.com', '/', ['http'])).toEqual(
      Array(2).fill('200 alpha /'),
    );
    expect(await site.everywhere('evil2.example.com', '/', ['http'])).toEqual(
      Array(2).fill('404 404 no Ingress matches this host and path'),
    );
    const metrics = await (
      await fetch(`http://${site.controllers[0]?.address ?? ''}:9090/metrics`)
    ).text();
    expect(metrics).toMatch(/haptic_ingresses\{state="excluded"\} 2/);
  });

  it('keeps the last good configuration when HAProxy rejects the template, and resumes after the fix', async () => {
    await site.apply(site.ingress('steady', [route('steady.example.com', '/', 'Prefix', 'beta')]));
    await eventually(
      'steady',
      () => site.everywhere('steady.example.com', '/', ['http']),
      all('200 beta /'),
    );
    const get = await kubectl([
      'get',
      'haproxytemplateconfig',
      'haptic',
      '-n',
      site.namespace,
      '-o',
      'json',
    ]);
    const config = JSON.parse(get.stdout) as { spec: { haproxyConfig: { template: string } } };
    const good = config.spec.haproxyConfig.template;
    const broken = good.replace(
      'balance {{ backend.options.balance }}',
      'balance no-such-algorithm',
    );
    const patch = (template: string) =>
      kubectl([
        'patch',
        'haproxytemplateconfig',
        'haptic',
        '-n',
        site.namespace,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { haproxyConfig: { template } } }),
      ]);
    expect((await patch(broken)).exitCode).toBe(0);
    const condition = await eventually(
      'condition False',
      async () =>
        (
          await kubectl([
            'get',
            'haproxytemplateconfig',
            'haptic',
            '-n',
            site.namespace,
            '-o',
            'jsonpath={.status.conditions[0].status} {.status.conditions[0].reason} {.status.conditions[0].message}',
          ])
        ).stdout,
      (text) => text.startsWith('False CheckFailed'),
    );
    const reduced =
      /\[ALERT\] haproxy\.cfg:\d+: 'balance' names a load-balancing algorithm HAProxy does not support/;
    expect(condition).toMatch(reduced);
    // HAProxy's own wording ("'balance' only supports 'roundrobin', ...") is not passed on.
    expect(condition).not.toContain('only supports');
    const events = await eventually(
      'Event',
      async () =>
        (
          await kubectl([
            'get',
            'events',
            '-n',
            site.namespace,
            '--field-selector',
            'reason=CheckFailed',
            '-o',
            'jsonpath={.items[*].message}',
          ])
        ).stdout,
      (text) => reduced.test(text),
    );
    expect(events).toContain('haproxy -c rejects');
    expect(events).not.toContain('only supports');
    // A change meanwhile is not delivered; the last good configuration keeps serving. An
    // Ingress the controller leaves out, written after the change, shows when a render has
    // seen it: the controller reads Ingresses in the order they were written.
    const excludedBefore = excluded(await controllerMetrics());
    await site.apply(site.ingress('steady', [route('steady.example.com', '/', 'Prefix', 'alpha')]));
    const marker = site.ingress('rendered-marker', [
      route('marker.example.com', '/', 'Prefix', 'alpha'),
    ]) as { metadata: Record<string, unknown> };
    marker.metadata.annotations = { 'haproxy-haptic.org/timeout': '5s\nlua-load /tmp/x.lua' };
    await site.apply(marker);
    await eventually(
      'a render that saw the change (the marker left out)',
      controllerMetrics,
      (metrics) => excluded(metrics) === excludedBefore + 1,
    );
    expect(await site.everywhere('steady.example.com', '/', ['http'])).toEqual(
      Array(2).fill('200 beta /'),
    );
    expect(
      (await kubectl(['delete', 'ingress', 'rendered-marker', '-n', site.namespace])).exitCode,
    ).toBe(0);
    expect((await patch(good)).exitCode).toBe(0);
    await eventually(
      'resumed',
      () => site.everywhere('steady.example.com', '/', ['http']),
      all('200 alpha /'),
    );
    await eventually(
      'condition True',
      async () =>
        (
          await kubectl([
            'get',
            'haproxytemplateconfig',
            'haptic',
            '-n',
            site.namespace,
            '-o',
            'jsonpath={.status.conditions[0].status}',
          ])
        ).stdout,
      (text) => text === 'True',
    );
  });

  it('brings an agent that stopped answering to the current configuration', async () => {
    const [first] = site.replicas;
    if (first === undefined) throw new Error('no replica');
    await site.container(first.name, 'agent', 'pause');
    await site.apply(site.ingress('late', [route('late.example.com', '/', 'Prefix', 'alpha')]));
    await eventually(
      'other replica serves',
      async () => (await site.fetch(site.replicas[1] ?? first, 'http', 'late.example.com')).status,
      (s) => s === 200,
    );
    expect((await site.fetch(first, 'http', 'late.example.com')).status).toBe(404);
    await site.container(first.name, 'agent', 'resume');
    await eventually(
      'restarted replica serves',
      () => site.everywhere('late.example.com', '/', ['http']),
      all('200 alpha /'),
    );
  });

  it("serves ingress-nginx's annotations through HAProxy, and leaves out only the routes of an Ingress with a value it cannot parse", async () => {
    const json = { accept: 'application/json' };
    const regex = (path: string) => ({ path, pathType: 'ImplementationSpecific' });
    await site.apply(
      site.ingress(
        'rewrite',
        [
          {
            host: 'rewrite.example.com',
            http: {
              paths: [
                {
                  ...regex('/app(/|$)(.*)'),
                  backend: { service: { name: 'alpha', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
        {},
        {
          'nginx.ingress.kubernetes.io/use-regex': 'true',
          'nginx.ingress.kubernetes.io/rewrite-target': '/$2',
          'nginx.ingress.kubernetes.io/upstream-vhost': 'internal.alpha',
        },
      ),
    );
    await site.apply(
      site.ingress(
        'moved',
        [route('moved.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/permanent-redirect': 'https://new.example.com/landing',
        },
      ),
    );
    await site.apply(
      site.ingress(
        'closed',
        [route('closed.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/whitelist-source-range': '192.0.2.0/24',
        },
      ),
    );
    // One value that does not parse: this Ingress's routes are left out, with an Event.
    await site.apply(
      site.ingress(
        'huge',
        [route('huge.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/proxy-body-size': 'huge',
        },
      ),
    );
    const [first] = site.replicas;
    if (first === undefined) throw new Error('no replica');
    const received = await eventually(
      'the rewritten path at alpha',
      async () => {
        const answer = await site.fetch(first, 'http', 'rewrite.example.com', '/APP/x/y?q=1', {
          ...json,
          'x-forwarded-for': '203.0.113.9',
        });
        return answer.status === 200 ? (JSON.parse(answer.body) as Record<string, unknown>) : {};
      },
      (body) => body.name === 'alpha',
      60_000,
    );
    expect(received).toMatchObject({ method: 'GET', path: '/x/y?q=1' });
    const headers = received.headers as Record<string, string>;
    expect(headers.host).toBe('internal.alpha');
    expect(headers['x-forwarded-host']).toBe('rewrite.example.com');
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-port']).toBe('80');
    // The client's own X-Forwarded-For is replaced by the address HAProxy saw.
    expect(headers['x-forwarded-for']).toBe(headers['x-real-ip']);
    expect(headers['x-real-ip']).not.toBe('203.0.113.9');
    expect(await site.everywhere('rewrite.example.com', '/app', ['http'])).toEqual(
      Array(2).fill('200 alpha /'),
    );
    expect(await site.everywhere('moved.example.com', '/any', ['http'])).toEqual(
      Array(2).fill('301 -> https://new.example.com/landing'),
    );
    expect(await site.everywhere('closed.example.com', '/', ['http'])).toEqual(
      Array(2).fill(expect.stringMatching(/^403 /) as string),
    );
    expect(await site.everywhere('huge.example.com', '/', ['http'])).toEqual(
      Array(2).fill('404 404 no Ingress matches this host and path'),
    );
    const events = await eventually(
      'AnnotationInvalid Event',
      async () =>
        (
          await kubectl([
            ...['get', 'events', '-n', site.namespace, '--field-selector'],
            ...['reason=AnnotationInvalid,involvedObject.name=huge', '-o', 'json'],
          ])
        ).stdout,
      (text) => text.includes('proxy-body-size'),
    );
    expect(events).toContain('\\"huge\\"');
    expect(events).toContain('bytes with an optional k, m or g');
  });

  it('serves a canary Ingress beside its primary: by header, by cookie, by weight, and tells a canary without a primary why it is not served', async () => {
    await site.apply(site.ingress('stable', [route('canary.example.com', '/', 'Prefix', 'alpha')]));
    await site.apply(
      site.ingress(
        'preview',
        [route('canary.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-by-header': 'x-preview',
          'nginx.ingress.kubernetes.io/canary-by-cookie': 'preview',
        },
      ),
    );
    const [first] = site.replicas;
    if (first === undefined) throw new Error('no replica');
    const ask = async (headers: Record<string, string> = {}) =>
      (await site.fetch(first, 'http', 'canary.example.com', '/x', headers)).body;
    await eventually(
      'the canary by its header',
      () => ask({ 'x-preview': 'always' }),
      (body) => body === 'beta /x',
      60_000,
    );
    expect(await ask()).toBe('alpha /x');
    expect(await ask({ 'x-preview': 'never', cookie: 'preview=always' })).toBe('alpha /x');
    expect(await ask({ cookie: 'preview=always' })).toBe('beta /x');
    expect(await site.everywhere('canary.example.com', '/y', ['http'])).toEqual(
      Array(2).fill('200 alpha /y'),
    );
    // All of the weight to the canary, then none.
    await site.apply(
      site.ingress(
        'preview',
        [route('canary.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-weight': '100',
        },
      ),
    );
    await eventually(
      'the whole weight on the canary',
      () => site.everywhere('canary.example.com', '/w', ['http']),
      all('200 beta /w'),
      60_000,
    );
    // A canary whose host and path no other Ingress serves is not served, with an Event.
    await site.apply(
      site.ingress(
        'orphan',
        [route('orphan.example.com', '/', 'Prefix', 'beta')],
        {},
        {
          'nginx.ingress.kubernetes.io/canary': 'true',
        },
      ),
    );
    const events = await eventually(
      'CanaryWithoutPrimary Event',
      async () =>
        (
          await kubectl([
            ...['get', 'events', '-n', site.namespace, '--field-selector'],
            ...['reason=CanaryWithoutPrimary,involvedObject.name=orphan', '-o', 'json'],
          ])
        ).stdout,
      (text) => text.includes('orphan.example.com'),
    );
    expect(events).toContain('no other Ingress serves');
    expect(await site.everywhere('orphan.example.com', '/', ['http'])).toEqual(
      Array(2).fill('404 404 no Ingress matches this host and path'),
    );
  });
});
