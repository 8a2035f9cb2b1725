/**
 * readIngressOptions: the options an Ingress's annotations set, under ingress-nginx's prefix and
 * HAProxy's, and the one finding per annotation not served as written (invalid, refused) or
 * the one finding for all it does not read.
 */
import { describe, expect, it } from 'vitest';
import {
  type IngressOptions,
  annotationsByName,
  defaultIngressOptions,
} from './annotation-catalog.ts';
import { readIngressOptions } from './ingress-options.ts';

const nginx = (name: string) => `nginx.ingress.kubernetes.io/${name}`;
const haproxy = (name: string) => `haproxy.org/${name}`;

/** Each supported route annotation, a value of it and the options it sets. */
const settings: readonly (readonly [string, string, Partial<IngressOptions>])[] = [
  [nginx('ssl-redirect'), 'false', { sslRedirect: false }],
  [haproxy('ssl-redirect'), 'false', { sslRedirect: false }],
  [nginx('force-ssl-redirect'), 'true', { forceSslRedirect: true }],
  [haproxy('ssl-redirect-code'), '301', { sslRedirectCode: 301 }],
  [nginx('use-regex'), 'true', { useRegex: true }],
  [nginx('rewrite-target'), '/$2', { rewriteTarget: { format: '/\\2', highestGroup: 2 } }],
  [nginx('app-root'), '/app', { appRoot: '/app' }],
  [
    nginx('permanent-redirect'),
    'https://example.com/new',
    { permanentRedirect: 'https://example.com/new' },
  ],
  [nginx('permanent-redirect-code'), '308', { permanentRedirectCode: 308 }],
  [
    nginx('temporal-redirect'),
    'https://example.com/%7E',
    { temporalRedirect: 'https://example.com/%%7E' },
  ],
  [nginx('temporal-redirect-code'), '307', { temporalRedirectCode: 307 }],
  [nginx('proxy-connect-timeout'), '5', { connectTimeout: 5_000 }],
  [haproxy('timeout-connect'), '5s', { connectTimeout: 5_000 }],
  [nginx('proxy-read-timeout'), '120', { readTimeout: 120_000 }],
  [haproxy('timeout-server'), '2m', { readTimeout: 120_000 }],
  [nginx('proxy-send-timeout'), '500ms', { sendTimeout: 500 }],
  [nginx('proxy-body-size'), '8m', { maxBodyBytes: 8 * 1024 ** 2 }],
  [nginx('proxy-body-size'), '0', { maxBodyBytes: null }],
  [
    nginx('whitelist-source-range'),
    '10.0.0.0/8, 192.0.2.7',
    { allowRanges: ['10.0.0.0/8', '192.0.2.7'] },
  ],
  [nginx('allowlist-source-range'), '10.0.0.0/8', { allowRanges: ['10.0.0.0/8'] }],
  [haproxy('allow-list'), '10.0.0.0/8', { allowRanges: ['10.0.0.0/8'] }],
  [haproxy('whitelist'), '10.0.0.0/8', { allowRanges: ['10.0.0.0/8'] }],
  [nginx('denylist-source-range'), '2001:DB8::/32', { denyRanges: ['2001:db8::/32'] }],
  [haproxy('deny-list'), '2001:DB8::/32', { denyRanges: ['2001:db8::/32'] }],
  [haproxy('blacklist'), '2001:DB8::/32', { denyRanges: ['2001:db8::/32'] }],
  [nginx('backend-protocol'), 'grpc', { backendProtocol: 'GRPC' }],
  [nginx('upstream-vhost'), 'API.internal', { upstreamVhost: 'api.internal' }],
];

/** Each name that has a sibling under the other prefix, and that sibling. */
const siblings: readonly (readonly [string, string, string])[] = [
  [nginx('ssl-redirect'), haproxy('ssl-redirect'), 'false'],
  [nginx('proxy-connect-timeout'), haproxy('timeout-connect'), '7s'],
  [nginx('proxy-read-timeout'), haproxy('timeout-server'), '90'],
  [nginx('whitelist-source-range'), haproxy('allow-list'), '10.1.0.0/16,::1'],
  [nginx('whitelist-source-range'), haproxy('whitelist'), '10.1.0.0/16'],
  [nginx('denylist-source-range'), haproxy('deny-list'), '192.0.2.0/24'],
  [nginx('denylist-source-range'), haproxy('blacklist'), '192.0.2.0/24'],
];

/** Each route annotation, a value it refuses, and words of the form it expects. */
const invalid: readonly (readonly [string, string, string])[] = [
  [nginx('ssl-redirect'), 'yes', '"true" or "false"'],
  [haproxy('ssl-redirect-code'), '300', 'one of 301, 302, 303, 307, 308'],
  [nginx('use-regex'), 'on', '"true" or "false"'],
  [nginx('rewrite-target'), '/$x', '$1…$9'],
  [nginx('app-root'), 'app', 'an absolute URL path'],
  [nginx('permanent-redirect'), "https://x.example/' if TRUE", 'an absolute http or https URL'],
  [nginx('temporal-redirect'), 'javascript:alert(1)', 'an absolute http or https URL'],
  [nginx('proxy-connect-timeout'), '0', '1 ms to 24 h'],
  [haproxy('timeout-server'), '2d', '1 ms to 24 h'],
  [nginx('proxy-body-size'), 'huge', 'bytes with an optional k, m or g'],
  [nginx('whitelist-source-range'), '10.0.0.0/33', 'IP addresses or CIDR ranges'],
  [haproxy('deny-list'), 'everyone', 'IP addresses or CIDR ranges'],
  [nginx('backend-protocol'), 'AJP', 'one of HTTP, HTTPS, GRPC, GRPCS, H2C'],
  [nginx('upstream-vhost'), 'a b', 'a DNS name'],
];

const label = 'shop/web';

describe('readIngressOptions', () => {
  it.each([
    ['no annotations', {}],
    [
      'only annotations of other prefixes',
      {
        'kubernetes.io/ingress.class': 'nginx',
        'haproxy-haptic.org/host-shared-with': '*',
        'ingress.kubernetes.io/rewrite-target': '/$9',
        'nginx.ingress.kubernetes.io.evil.example/configuration-snippet': 'lua-load /x',
        'example.com/haproxy.org/backend-config-snippet': 'x',
        'xhaproxy.org/auth-url': 'x',
      },
    ],
  ])('gives the defaults, no finding and no block for %s', (_what, annotations) => {
    const read = readIngressOptions(annotations, label);
    expect(read).toEqual({ options: defaultIngressOptions, findings: [], blocking: false });
    expect(read.options).toBe(defaultIngressOptions);
  });

  it('has the defaults of ingress-nginx', () => {
    expect(defaultIngressOptions).toMatchObject({
      sslRedirect: true,
      forceSslRedirect: false,
      sslRedirectCode: 308,
      useRegex: false,
      permanentRedirectCode: 301,
      temporalRedirectCode: 302,
      maxBodyBytes: 1024 * 1024,
    });
  });

  it.each(settings)('reads %s: %j', (name, value, set) => {
    const read = readIngressOptions({ [name]: value }, label);
    expect(read.findings).toEqual([]);
    expect(read.blocking).toBe(false);
    expect(read.options).toEqual({ ...defaultIngressOptions, ...set });
  });

  it.each(siblings)('reads %s as %s', (nginxName, haproxyName, value) => {
    const one = readIngressOptions({ [nginxName]: value }, label);
    const two = readIngressOptions({ [haproxyName]: value }, label);
    expect(one.findings).toEqual([]);
    expect(one.options).not.toEqual(defaultIngressOptions);
    expect(two).toEqual(one);
  });

  it('knows every name of the route annotations this table reads, under both prefixes', () => {
    for (const [name] of [...settings, ...invalid]) expect(annotationsByName.has(name)).toBe(true);
  });

  it('reads several annotations together, a value with spaces around it trimmed', () => {
    const read = readIngressOptions(
      {
        [nginx('use-regex')]: ' true ',
        [nginx('rewrite-target')]: '/$1',
        [nginx('proxy-body-size')]: '1k',
        [haproxy('allow-list')]: '10.0.0.1',
        'other.example/x': 'y',
      },
      label,
    );
    expect(read).toEqual({
      options: {
        ...defaultIngressOptions,
        useRegex: true,
        rewriteTarget: { format: '/\\1', highestGroup: 1 },
        maxBodyBytes: 1024,
        allowRanges: ['10.0.0.1'],
      },
      findings: [],
      blocking: false,
    });
  });

  it.each(invalid)(
    'refuses %s: %j with AnnotationInvalid naming the field, the value and the form, and blocks the routes',
    (name, value, form) => {
      const read = readIngressOptions({ [name]: value }, label);
      const field = `metadata.annotations[${JSON.stringify(name)}]`;
      expect(read.blocking).toBe(true);
      expect(read.findings).toEqual([
        {
          reason: 'AnnotationInvalid',
          field,
          annotations: [name],
          message: expect.stringContaining(
            `Ingress shop/web has ${field} ${JSON.stringify(value)}, which is not `,
          ) as unknown,
        },
      ]);
      const [finding] = read.findings;
      expect(finding?.message).toContain(form);
      expect(finding?.message).toMatch(/Its routes are left out until the value is fixed\.$/);
    },
  );

  it('shows at most 80 characters of a hostile value, quoted, with its line breaks escaped', () => {
    const value = `5s\nlua-load /tmp/x ${'x'.repeat(5000)}`;
    const read = readIngressOptions({ [nginx('proxy-read-timeout')]: value }, label);
    const message = read.findings[0]?.message ?? '';
    expect(message).toContain(JSON.stringify(`${value.slice(0, 80)}…`));
    expect(message).not.toContain('\n');
    expect(message).not.toContain('x'.repeat(81));
    expect(message.length).toBeLessThan(500);
  });

  it('tells an invalid value and keeps the others it read', () => {
    const read = readIngressOptions(
      { [nginx('proxy-body-size')]: 'huge', [nginx('use-regex')]: 'true' },
      label,
    );
    expect(read.options.useRegex).toBe(true);
    expect(read.findings.map((finding) => finding.reason)).toEqual(['AnnotationInvalid']);
    expect(read.blocking).toBe(true);
  });

  it.each([
    [nginx('configuration-snippet'), 'more_set_headers "X: y";'],
    [nginx('server-snippet'), ''],
    [nginx('auth-snippet'), 'x'],
    [nginx('stream-snippet'), 'x'],
    [nginx('modsecurity-snippet'), 'x'],
    [nginx('auth-url'), 'https://auth.example.com/'],
    [nginx('auth-signin'), 'https://auth.example.com/start'],
    [nginx('auth-type'), 'basic'],
    [nginx('auth-tls-secret'), 'shop/ca'],
    [haproxy('backend-config-snippet'), 'http-request return status 200'],
    [haproxy('frontend-config-snippet'), 'x'],
    [haproxy('global-config-snippet'), 'lua-load /x'],
    [haproxy('auth-type'), 'basic-auth'],
  ])('refuses %s (%j) with AnnotationRefused, and blocks the routes', (name, value) => {
    const read = readIngressOptions({ [name]: value }, label);
    expect(read.blocking).toBe(true);
    expect(read.findings).toEqual([
      {
        reason: 'AnnotationRefused',
        field: `metadata.annotations[${JSON.stringify(name)}]`,
        annotations: [name],
        message: expect.stringMatching(
          new RegExp(
            `^Ingress shop/web has the annotation ${name.replace(/\./g, '\\.')}, which is refused: .+ Its routes are left out until the annotation is removed\\.$`,
          ),
        ) as unknown,
      },
    ]);
    // The refused text itself is never repeated.
    if (value.length > 2) expect(read.findings[0]?.message).not.toContain(value);
  });

  it('gives one AnnotationIgnored finding listing every name it does not read, in name order, and serves the routes', () => {
    const names = [
      nginx('x-no-such-annotation'),
      haproxy('no-such-annotation'),
      nginx('x-not-read-either'),
      nginx('Configuration-Snippet'),
    ];
    const read = readIngressOptions(Object.fromEntries(names.map((name) => [name, 'x\ny'])), label);
    const sorted = [...names].sort();
    expect(read.blocking).toBe(false);
    expect(read.options).toEqual(defaultIngressOptions);
    expect(read.findings).toEqual([
      {
        reason: 'AnnotationIgnored',
        field: `metadata.annotations[${JSON.stringify(sorted[0])}]`,
        annotations: sorted,
        message: `Ingress shop/web has annotations this controller does not read: ${sorted.join(', ')}. The routes are served without them; docs/ingress-migration.md says what to use instead.`,
      },
    ]);
  });

  it('tells a refused, an invalid and the ignored annotations together, and blocks', () => {
    const read = readIngressOptions(
      {
        [nginx('server-snippet')]: 'x',
        [nginx('proxy-body-size')]: 'huge',
        [nginx('x-one')]: '1',
        [haproxy('x-two')]: '2',
      },
      label,
    );
    expect(read.blocking).toBe(true);
    expect(read.findings.map((finding) => [finding.reason, finding.annotations])).toEqual([
      ['AnnotationInvalid', [nginx('proxy-body-size')]],
      ['AnnotationRefused', [nginx('server-snippet')]],
      ['AnnotationIgnored', [haproxy('x-two'), nginx('x-one')]],
    ]);
  });

  it('gives the same answer whatever order the annotations come in', () => {
    const entries: [string, string][] = [
      [nginx('proxy-read-timeout'), '10'],
      [haproxy('timeout-server'), '20'],
      [nginx('x-one'), '1'],
      [haproxy('x-two'), '2'],
      [nginx('whitelist-source-range'), '10.0.0.0/8'],
      [haproxy('allow-list'), '192.0.2.0/24'],
    ];
    const one = readIngressOptions(Object.fromEntries(entries), label);
    const two = readIngressOptions(Object.fromEntries([...entries].reverse()), label);
    expect(two).toEqual(one);
  });
});
