import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { readTemplateConfig } from '../../api/template-config.ts';
import type { RoutingModel } from '../routing/model-types.ts';
import {
  contextNames,
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from './template-engine.ts';

function render(template: string, context: Record<string, unknown> = {}) {
  const config = readTemplateConfig({
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic' },
    spec: { haproxyConfig: { template } },
  });
  if ('message' in config) throw new Error(config.message);
  const engine = createTemplateEngine({
    parseLimit: 10_000,
    renderLimitMs: 1_000,
    memoryLimit: 1_000_000,
  });
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) return parsed.message;
  const result = renderTemplates(engine, parsed, context);
  return result.ok ? (result.files[0]?.content ?? '') : result.message;
}

describe('the template sandbox', () => {
  it('renders data', () => {
    expect(
      render('{% for b in backends %}backend {{ b.name }}\n{% endfor %}', {
        backends: [{ name: 'x' }],
      }),
    ).toBe('backend x\n');
  });

  it.each([
    ['an output with a newline', '{{ value }}', { value: 'a\n  lua-load /x' }, /line break or NUL/],
    ['the raw filter', '{{ value | raw }}', { value: 'a\nb' }, /line break or NUL/],
    [
      'an include',
      "{% include 'x' %}",
      {},
      /rendering haproxy.cfg failed|ENOENT|not found|Failed/i,
    ],
    [
      'a prototype walk',
      '{{ value.constructor.name }}',
      { value: {} },
      /undefined variable|constructor/,
    ],
    ['an unknown variable', '{{ nope }}', {}, /undefined variable: nope/],
    ['an unknown filter', '{{ 1 | shell }}', {}, /undefined filter: shell/],
    [
      'an endless loop of output',
      '{% for i in (1..100000000) %}xxxxxxxxxx{% endfor %}',
      {},
      /limit/i,
    ],
  ])('refuses %s', (_what, template, context, message) => {
    expect(render(template, context)).toMatch(message);
  });

  it('names months and days in English, whatever the locale of the process', async () => {
    const script = [
      `import { readTemplateConfig } from ${JSON.stringify(new URL('../../api/template-config.ts', import.meta.url).href)};`,
      `import { createTemplateEngine, parseTemplates, renderTemplates } from ${JSON.stringify(new URL('./template-engine.ts', import.meta.url).href)};`,
      `const config = readTemplateConfig({ kind: 'HAProxyTemplateConfig', metadata: { namespace: 'haptic', name: 'haptic' }, spec: { haproxyConfig: { template: '{{ "2024-03-01T12:00:00Z" | date: "%A %B" }}' } } });`,
      'const engine = createTemplateEngine();',
      'const outcome = renderTemplates(engine, parseTemplates(engine, config), {});',
      'process.stdout.write(outcome.ok ? outcome.files[0].content : outcome.message);',
    ].join('\n');
    const german = await execa(process.execPath, ['--input-type=module', '-e', script], {
      env: { LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8', TZ: 'UTC' },
    });
    expect(german.stdout).toBe('Friday March');
  });

  it('refuses file names that would escape the base directory', () => {
    const config = readTemplateConfig({
      kind: 'HAProxyTemplateConfig',
      metadata: { namespace: 'haptic', name: 'haptic' },
      spec: { haproxyConfig: { template: 'x' }, maps: { '../../etc/passwd': { template: 'x' } } },
    });
    expect('message' in config ? config.field : '').toBe('spec.maps.../../etc/passwd');
  });
});

describe('the context names a configuration reads', () => {
  const configOf = (template: string) => {
    const config = readTemplateConfig({
      kind: 'HAProxyTemplateConfig',
      metadata: { namespace: 'haptic', name: 'haptic' },
      spec: { haproxyConfig: { template } },
    });
    if ('message' in config) throw new Error(config.message);
    return config;
  };
  const model: RoutingModel = {
    routes: [
      {
        host: 'a.example.com',
        pathType: 'Prefix',
        path: '/',
        exactKey: 'a.example.com/',
        prefixKey: 'a.example.com/',
        backend: 'a_web_80',
        ingress: 'a/one',
        canary: false,
      },
    ],
    exactMap: [{ key: 'a.example.com/', backend: 'a_web_80' }],
    prefixMap: [{ key: 'a.example.com/', backend: 'a_web_80' }],
    regexMap: [],
    canaries: [],
    backends: [],
    certificates: [],
    defaultCertificate: null,
    ingresses: [{ namespace: 'a', name: 'one', annotations: { x: 'y' } }],
  };

  it.each([
    '{% for r in routes %}{{ r.host }} {{ exact_map.size }}{% endfor %}',
    '{% for e in prefix_map %}{% for i in ingresses %}{{ e.key }}{{ i.name }}{% endfor %}{% endfor %}',
    '{% assign n = ingress_class | upcase %}{{ n }}{% if default_certificate %}x{% endif %}',
    '{% capture c %}{{ certificates.size }}{% endcapture %}{{ c }}{{ routes[0]["host"] }}',
  ])('renders %j with only the names it reads as with all of them', (template) => {
    const names = contextNames(configOf(template));
    expect(names).toBeDefined();
    const all = templateContext(model, 'haptic');
    const some = templateContext(model, 'haptic', names);
    expect(Object.keys(some).length).toBeLessThan(Object.keys(all).length);
    expect(render(template, some)).toBe(render(template, all));
    expect(render(template, all)).not.toMatch(/failed/);
  });

  it.each([
    ['a computed name', '{% assign n = "routes" %}{{ [n].size }}'],
    ['a computed loop list', '{% assign n = "routes" %}{% for r in [n] %}{{ r.host }}{% endfor %}'],
    ['a template that does not parse', '{% for r in routes %}'],
  ])('is unknown (every name is sent) for %s', (_, template) => {
    expect(contextNames(configOf(template))).toBeUndefined();
  });
});
