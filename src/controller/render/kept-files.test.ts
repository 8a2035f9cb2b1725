import { describe, expect, it } from 'vitest';
import { KeptFiles } from './kept-files.ts';
import { readTemplateConfig } from '../../api/template-config.ts';
import {
  createTemplateEngine,
  escapeFilterName,
  parseTemplates,
  renderTemplates,
} from './template-engine.ts';

/** A value whose `name` counts its reads: only a render of the file reads it. */
function counted(name: string): { value: { readonly name: string }; reads: () => number } {
  let reads = 0;
  return {
    value: {
      get name() {
        reads += 1;
        return name;
      },
    },
    reads: () => reads,
  };
}

/** Renders the one-file configuration `template` again and again with one KeptFiles. */
function renderer(template: string) {
  const config = readTemplateConfig({
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic' },
    spec: { haproxyConfig: { template } },
  });
  if ('message' in config) throw new Error(config.message);
  const engine = createTemplateEngine();
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  const kept = new KeptFiles(escapeFilterName(engine));
  return (context: Record<string, unknown>): string => {
    const outcome = renderTemplates(engine, parsed, context, { kept });
    return outcome.ok ? (outcome.files[0]?.content ?? '') : outcome.message;
  };
}

describe('files kept from the last render', () => {
  it('gives the last text while every name the template reads holds the same value', () => {
    const render = renderer('backend {{ backend.name }}\n{% for r in routes %}{{ r }}{% endfor %}');
    const backend = counted('web');
    const routes = ['a', 'b'];
    expect(render({ backend: backend.value, routes, other: 1 })).toBe('backend web\nab');
    expect(backend.reads()).toBe(1);
    // A name the template does not read changed: the same text, not rendered.
    expect(render({ backend: backend.value, routes, other: 2 })).toBe('backend web\nab');
    expect(backend.reads()).toBe(1);
    // A list of the same items that is another list is another value: rendered.
    expect(render({ backend: backend.value, routes: ['a', 'b'] })).toBe('backend web\nab');
    expect(backend.reads()).toBe(2);
    const changed = counted('api');
    expect(render({ backend: changed.value, routes })).toBe('backend api\nab');
    expect(changed.reads()).toBe(1);
  });

  it('renders every time a template that may read anything but its names', () => {
    for (const template of [
      '{% assign n = backend.name %}{{ n }}',
      '{{ backend.name }}{{ "now" | date: "%s" }}',
      '{% for r in routes %}{% cycle "x", "y" %}{% endfor %}{{ backend.name }}',
    ]) {
      const render = renderer(template);
      const backend = counted('web');
      const context = { backend: backend.value, routes: [1, 2] };
      render(context);
      render(context);
      expect(backend.reads(), template).toBe(2);
    }
  });

  it('renders every time a template that computes a name it reads', () => {
    // `[n]` reads the name n holds: the analysis sees only `names`, which does not change.
    const render = renderer(
      '{% for n in names %}{% for b in [n] %}{{ b.name }} {% endfor %}{% endfor %}',
    );
    const names = ['backends'];
    expect(render({ names, backends: [{ name: 'b1' }] })).toBe('b1 ');
    expect(render({ names, backends: [{ name: 'b2' }] })).toBe('b2 ');
  });

  it('keeps no failed render: the same values fail again', () => {
    const render = renderer('{{ backend.name }}{{ missing }}');
    const backend = counted('web');
    const context = { backend: backend.value };
    expect(render(context)).toMatch(/undefined variable: missing/);
    expect(render(context)).toMatch(/undefined variable: missing/);
    expect(backend.reads()).toBe(2);
    // A name it reads appearing is a change: rendered, then kept.
    expect(render({ ...context, missing: '!' })).toBe('web!');
    expect(backend.reads()).toBe(3);
  });
});
