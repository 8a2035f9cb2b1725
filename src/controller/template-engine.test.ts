import { describe, expect, it } from 'vitest';
import { readTemplateConfig } from './template-config.ts';
import { createTemplateEngine, parseTemplates, renderTemplates } from './template-engine.ts';

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

  it('refuses file names that would escape the base directory', () => {
    const config = readTemplateConfig({
      kind: 'HAProxyTemplateConfig',
      metadata: { namespace: 'haptic', name: 'haptic' },
      spec: { haproxyConfig: { template: 'x' }, maps: { '../../etc/passwd': { template: 'x' } } },
    });
    expect('message' in config ? config.field : '').toBe('spec.maps.../../etc/passwd');
  });
});
