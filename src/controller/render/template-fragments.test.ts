import { ForTag, type Liquid } from 'liquidjs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTemplateConfig } from '../../api/template-config.ts';
import { createTemplateEngine, parseTemplates, renderTemplates } from './template-engine.ts';

const limits = { parseLimit: 10_000, renderLimitMs: 5_000, memoryLimit: 1_000_000 };

/** A render of `template` on one parse by `engine` (so loops reuse fragments), per context. */
function renderer(template: string, engine: Liquid): (context: Record<string, unknown>) => string {
  const config = readTemplateConfig({
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic' },
    spec: { haproxyConfig: { template } },
  });
  if ('message' in config) throw new Error(config.message);
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  return (context) => {
    const result = renderTemplates(engine, parsed, context);
    return result.ok ? (result.files[0]?.content ?? '') : result.message;
  };
}

/**
 * Renders `template` with each context in turn on one parse (so loops reuse fragments), and
 * on a parse by an engine with Liquid's own `for` tag: both give the same texts and failures.
 */
function renderBothWays(
  template: string,
  contexts: readonly Record<string, unknown>[],
  memoryLimit = limits.memoryLimit,
): { readonly reusing: string[]; readonly plain: string[] } {
  const reusing = renderer(template, createTemplateEngine({ ...limits, memoryLimit }));
  const plainEngine = createTemplateEngine({ ...limits, memoryLimit });
  plainEngine.registerTag('for', ForTag);
  const plain = renderer(template, plainEngine);
  return { reusing: contexts.map(reusing), plain: contexts.map(plain) };
}

const words = (n: number, from = 0): string[] =>
  Array.from({ length: n }, (_, i) => `word${String(from + i).padStart(6, '0')}`);

describe('loops that reuse fragments', () => {
  it('reuse the text of items seen before and render changed ones', () => {
    const { reusing, plain } = renderBothWays(
      '{% for b in backends %}backend {{ b.name }}{% for s in b.servers %} {{ s }}{% endfor %}\n{% endfor %}',
      [
        {
          backends: [
            { name: 'x', servers: ['1', '2'] },
            { name: 'y', servers: [] },
          ],
        },
        {
          backends: [
            { name: 'x', servers: ['1', '3'] },
            { name: 'y', servers: [] },
          ],
        },
        {
          backends: [
            { name: 'y', servers: [] },
            { name: 'x', servers: ['1', '2'] },
          ],
        },
      ],
    );
    expect(reusing).toEqual([
      'backend x 1 2\nbackend y\n',
      'backend x 1 3\nbackend y\n',
      'backend y\nbackend x 1 2\n',
    ]);
    expect(reusing).toEqual(plain);
  });

  it('decide on reuse when a body first renders: a loop first rendered empty keeps texts after', () => {
    const render = renderer(
      '{% for b in backends %}{{ b.name }};{% endfor %}',
      createTemplateEngine(limits),
    );
    let rendered = 0;
    const backend = () => ({
      get name() {
        rendered += 1;
        return 'x';
      },
      toJSON: () => ({ name: 'x' }),
    });
    expect(render({ backends: [] })).toBe('');
    expect(render({ backends: [backend()] })).toBe('x;');
    expect(rendered).toBe(1);
    // Kept: the item is named by its JSON, its body not rendered again.
    expect(render({ backends: [backend()] })).toBe('x;');
    expect(rendered).toBe(1);
  });

  it('render as Liquid does around a loop that emits kept texts directly: offset continue, empty lists and else, non-lists, null items, a shadowed variable', () => {
    const template = [
      '{% for r in routes %}{{ r.host }};{% endfor %}|',
      '{% for r in routes offset: continue %}{{ r.host }};{% endfor %}|',
      '{% for r in empty %}{{ r.host }}{% else %}none{% endfor %}|',
      '{% for c in text %}[{{ c }}]{% endfor %}|',
      '{% for r in map %}{{ r[0] }}{% endfor %}|',
      '{% for r in routes %}{% for r in r.paths %}{{ r }},{% endfor %}{% endfor %}|',
      '{% for r in nulls %}{{ r.host }}.{% endfor %}',
    ].join('');
    const context = (hosts: readonly string[]) => ({
      routes: hosts.map((host) => ({ host, paths: [`/${host}`] })),
      empty: [],
      text: 'abc',
      map: { k: 1 },
      nulls: [null, { host: 'n' }],
    });
    const { reusing, plain } = renderBothWays(template, [
      context(['a', 'b']),
      context(['a', 'c', 'b']),
      context([]),
    ]);
    expect(reusing[1]).toBe('a;c;b;||none|[abc]|k|/a,/c,/b,|.n.');
    expect(reusing).toEqual(plain);
  });

  it('charge the memory units of a reused body again, failing where a full render fails, with the same message', () => {
    // Each body allocates through split and join; the second render's items are all seen,
    // but together they use more than the limit.
    const template = '{% for w in items %}{{ w | split: "" | join: "-" }}\n{% endfor %}';
    const { reusing, plain } = renderBothWays(
      template,
      [{ items: words(20) }, { items: [...words(20), ...words(20)] }],
      900,
    );
    expect(plain[0]).toMatch(/^w-o-r-d/);
    expect(plain[1]).toMatch(/memory alloc limit exceeded/);
    expect(reusing).toEqual(plain);
  });

  it('render every time a body reading more than its item: the loop index, outer variables, assignments, the clock', () => {
    const templates = [
      '{% for w in items %}{{ forloop.index }} {{ w }}\n{% endfor %}',
      '{% for w in items %}{{ w }}{{ suffix }}\n{% endfor %}',
      '{% assign n = 0 %}{% for w in items %}{% assign n = n | plus: 1 %}{{ w }}{{ n }}\n{% endfor %}',
      '{% for w in items %}{{ w }} {{ "now" | date: "%N" }}\n{% endfor %}',
      '{% for w in items %}{{ w }}{% break %}{% endfor %}',
    ];
    for (const template of templates) {
      const { reusing, plain } = renderBothWays(template, [
        { items: ['a', 'b'], suffix: '1' },
        { items: ['b', 'a', 'c'], suffix: '2' },
      ]);
      expect(reusing.map((text) => text.replace(/ \d{9}$/gm, ''))).toEqual(
        plain.map((text) => text.replace(/ \d{9}$/gm, '')),
      );
      if (!template.includes('date')) expect(reusing).toEqual(plain);
    }
  });

  it('render every time a body that reads a name its item holds', () => {
    const routes = [{ backend: 'web' }, { backend: 'api' }];
    const { reusing, plain } = renderBothWays(
      '{% for r in routes %}{% for s in [r.backend] %}{{ s }} {% endfor %}\n{% endfor %}',
      [
        { routes, web: ['10.0.0.1'], api: ['10.0.0.2'] },
        { routes, web: ['10.0.0.3'], api: ['10.0.0.2'] },
      ],
    );
    expect(plain[1]).toContain('10.0.0.3');
    expect(reusing).toEqual(plain);
  });

  it('fail on an item as a full render does, and keep nothing of the failure', () => {
    const { reusing, plain } = renderBothWays('{% for b in backends %}{{ b.name }}\n{% endfor %}', [
      { backends: [{ name: 'x' }, { other: 'y' }] },
      { backends: [{ name: 'x' }, { name: 'y\nbind :1' }] },
      { backends: [{ name: 'x' }, { name: 'y' }] },
    ]);
    expect(plain[0]).toMatch(/undefined variable: b\.name/);
    expect(plain[1]).toMatch(/would insert a line break/);
    expect(reusing).toEqual(plain);
  });

  it('render a list that shares its ends with the last one as Liquid does: the spans of the last text, the items between, the memory limit', () => {
    // The items are the same objects from render to render, as the render process keeps them.
    const pool = Array.from({ length: 120 }, (_, index) => ({ name: `item${String(index)}` }));
    const indexes = (most: number) => fc.array(fc.nat({ max: 119 }), { maxLength: most });
    const edit = fc.record({
      at: fc.nat({ max: 100 }),
      remove: fc.nat({ max: 3 }),
      insert: indexes(3),
    });
    fc.assert(
      fc.property(
        indexes(100),
        // Edits keep the ends; a list made anew shares items away from them (looked up when
        // more than 64 are between the ends).
        fc.array(fc.oneof(edit, edit, indexes(100)), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(1_000_000, 400, 200),
        (first, steps, memoryLimit) => {
          let list = first.map((index) => pool[index]);
          const contexts = [{ items: list }];
          for (const step of steps) {
            if (Array.isArray(step)) {
              list = step.map((index) => pool[index]);
            } else {
              list = [...list];
              list.splice(step.at, step.remove, ...step.insert.map((index) => pool[index]));
            }
            contexts.push({ items: list });
          }
          const { reusing, plain } = renderBothWays(
            '{% for w in items %}{{ w.name | split: "" | join: "-" }}\n{% endfor %}',
            contexts,
            memoryLimit,
          );
          expect(reusing).toEqual(plain);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('take an item of the last list met away from the shared ends from the last text, charging its units', () => {
    const pool = Array.from({ length: 200 }, (_, index) => ({ name: `item${String(index)}` }));
    const base = pool.slice(0, 150);
    // Two renders that keep the base as a span (its fragments are no longer stamped, so the
    // third drops them), then the base reversed and more: nothing shared at the ends, 197
    // items between. With 3,000 memory units, 151 items fit and 197 do not.
    const contexts = [
      { items: base },
      { items: [...base, pool[150]] },
      { items: [...base, pool[151]] },
      { items: [pool[199], ...base.slice(1).reverse(), ...pool.slice(152, 199)] },
    ];
    for (const memoryLimit of [1_000_000, 3_000]) {
      const { reusing, plain } = renderBothWays(
        '{% for w in items %}{{ w.name | split: "" | join: "-" }}\n{% endfor %}',
        contexts,
        memoryLimit,
      );
      expect(reusing).toEqual(plain);
      expect(plain.slice(0, 3).join('')).not.toMatch(/limit exceeded/);
      expect(plain[3]?.includes('memory alloc limit exceeded')).toBe(memoryLimit === 3_000);
    }
  });
});
