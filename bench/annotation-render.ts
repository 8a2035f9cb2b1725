/**
 * Render time of Ingresses with annotations against plain ones (issue 33's goal: 5,000
 * Ingresses that each use 5 annotations render in under 1.5 × the time of 5,000 plain ones).
 * Variants, all the fixture's Ingresses (controller-fixture.ts: one Service each, every
 * tenth with TLS):
 * - plain: as the fixture makes them (paths / Prefix and /api Exact);
 * - annotated: 5 annotations that each change the rendered backend, proxy-read-timeout "30",
 *   proxy-body-size "8m", whitelist-source-range "10.0.0.0/8,192.168.0.0/16",
 *   upstream-vhost "internal.example" and rewrite-target "/$1" (which makes the paths
 *   regexes, as use-regex does), the paths `/(.*)` and `/api/(.*)`. A route asking options
 *   gets a backend variant, and the two paths' rewrites differ, so the model has a backend
 *   per route (2n) and a regex map of 2n entries instead of the exact and prefix maps;
 * - use-regex: the same with use-regex "true" instead of rewrite-target: the same paths and
 *   regex map, but both routes of an Ingress ask the same options and share one backend
 *   (n): what the annotations cost apart from the backend per route.
 *
 * Each run builds the models from freshly read Ingress views (no kept model, no Ingress
 * checked before: annotation parsing and validation count), then the template context
 * (model objects as Liquid items, the backends' options among them) and Liquid in-process,
 * as controller-render.ts does, with the templates parsed anew (no loop body's text from an
 * earlier render reused); the variants alternate, each first in turn, so other work on the
 * machine slows them alike. Median of `runs` after one warm-up. The fixture's one
 * namespace may take the default total of server slots, so no backend is left without
 * servers; the bench fails on any warning of the model. Then `haproxy -c` of each variant's
 * files once, through the local check sandbox; the bench fails if one is refused. The last
 * line is one JSON object: totals (model + context + Liquid) and `ratio` annotated / plain,
 * `modelRatio` and `renderRatio` (context + Liquid), the checks and haproxy.cfg's bytes, and
 * `ratioSharedBackend` (use-regex / plain).
 *
 *   node bench/annotation-render.ts [ingresses=5000] [runs=7]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalSandbox } from '../dev/lib/local-sandbox.ts';
import { readTemplateConfig } from '../src/api/template-config.ts';
import { checkBundle } from '../src/controller/pipeline/bundle-check.ts';
import { assembleBundle, requestModel } from '../src/controller/render/render-bundle.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../src/controller/render/template-engine.ts';
import { type ModelBudgets, defaultModelBudgets } from '../src/controller/routing/model-budgets.ts';
import type { ClusterSnapshot } from '../src/controller/routing/cluster-snapshot.ts';
import type { ApplyFile } from '../src/agent-api/apply-encoding.ts';
import type { IngressView } from '../src/validation/ingress-view.ts';
import { defaultTemplateConfig, ingressView, snapshotOf } from './controller-fixture.ts';

const n = Number(process.argv[2] ?? 5000);
const runs = Number(process.argv[3] ?? 7);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const nginx = 'nginx.ingress.kubernetes.io/';
const fiveAnnotations: Readonly<Record<string, string>> = {
  [`${nginx}proxy-read-timeout`]: '30',
  [`${nginx}proxy-body-size`]: '8m',
  [`${nginx}whitelist-source-range`]: '10.0.0.0/8,192.168.0.0/16',
  [`${nginx}upstream-vhost`]: 'internal.example',
  [`${nginx}rewrite-target`]: '/$1',
};
/** The same with use-regex instead of rewrite-target: regex paths, no rewrite. */
const fiveWithoutRewrite: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    Object.entries(fiveAnnotations).filter(([name]) => !name.endsWith('rewrite-target')),
  ),
  [`${nginx}use-regex`]: 'true',
};

/** The fixture's Ingress i with `annotations` and regex paths. */
function regexView(i: number, annotations: Readonly<Record<string, string>>): IngressView {
  return ingressView(i, `svc${i}`, {
    annotations,
    paths: [
      { path: '/(.*)', pathType: 'ImplementationSpecific' },
      { path: '/api/(.*)', pathType: 'ImplementationSpecific' },
    ],
  });
}

/**
 * `annotated`: the five annotations, each route a backend of its own (the rewrite differs by
 * path). `sharedBackend`: use-regex instead of rewrite-target, the same paths and regex map
 * and 4 other options, both routes of an Ingress asking the same, so sharing one backend:
 * what the annotations cost apart from the backend per route.
 */
type Variant = 'plain' | 'annotated' | 'sharedBackend';
const variants: readonly Variant[] = ['plain', 'annotated', 'sharedBackend'];
const views: Record<Variant, (i: number) => IngressView> = {
  plain: (i) => ingressView(i),
  annotated: (i) => regexView(i, fiveAnnotations),
  sharedBackend: (i) => regexView(i, fiveWithoutRewrite),
};
const labels: Record<Variant, string> = {
  plain: 'plain',
  annotated: 'annotated',
  sharedBackend: 'use-regex',
};
/** Backends each variant's model must have: one per Service, one per route, one per Service. */
const backendsOf: Record<Variant, number> = { plain: n, annotated: 2 * n, sharedBackend: n };

/**
 * All of the fixture is in one namespace: its server slots may take the default total (the
 * annotated model's 2n backends of 4 slots fit in it up to n = 6,144), so no backend is left
 * without servers and every variant renders all its servers.
 */
const budgets: ModelBudgets = {
  ...defaultModelBudgets,
  serverSlotsPerNamespace: defaultModelBudgets.serverSlots,
};

const base = await snapshotOf(n);
/** A snapshot of freshly read views: nothing of an earlier run's checks is reused. */
const freshSnapshot = (variant: Variant): ClusterSnapshot => ({
  ...base,
  ingresses: Array.from({ length: n }, (_, i) => views[variant](i)),
});

const configOrProblem = readTemplateConfig(defaultTemplateConfig());
if ('message' in configOrProblem) throw new Error(configOrProblem.message);
const config = configOrProblem;

/**
 * A new engine and parse for every render: the engine's `for` keeps what loop bodies rendered
 * by item text (template-fragments.ts), so a render of the same items again would be a lookup,
 * not the render of 5,000 Ingresses this measures.
 */
function coldTemplates() {
  const engine = createTemplateEngine();
  const parsed = parseTemplates(engine, config);
  if ('message' in parsed) throw new Error(parsed.message);
  return { engine, parsed };
}

const timed = <T>(work: () => T): [T, number] => {
  const started = performance.now();
  const value = work();
  return [value, performance.now() - started];
};

interface Sample {
  readonly modelMs: number;
  readonly contextMs: number;
  readonly liquidMs: number;
}

interface Shape {
  routes: number;
  backends: number;
  regexEntries: number;
  configBytes: number;
  files: readonly ApplyFile[];
}

function renderOnce(variant: Variant): { sample: Sample; shape: Shape } {
  const snapshot = freshSnapshot(variant);
  const [model, modelMs] = timed(() =>
    requestModel({ snapshot, ingressClass: 'haptic', budgets, now: new Date() }),
  );
  if (model.warnings.length > 0) {
    throw new Error(`${variant}: ${model.warnings.length} warnings: ${model.warnings[0]?.message}`);
  }
  const [context, contextMs] = timed(() => templateContext(model.model, 'haptic'));
  const { engine, parsed } = coldTemplates();
  const [rendered, liquidMs] = timed(() => renderTemplates(engine, parsed, context));
  if (!rendered.ok) throw new Error(`${variant}: ${rendered.message}`);
  const assembled = assembleBundle(model, rendered.files);
  if (!assembled.ok) throw new Error(`${variant}: ${assembled.message}`);
  const cfg = rendered.files.find((file) => file.path === 'haproxy.cfg');
  if (cfg === undefined) throw new Error(`${variant}: no haproxy.cfg rendered`);
  return {
    sample: { modelMs, contextMs, liquidMs },
    shape: {
      routes: model.model.routes.length,
      backends: model.model.backends.length,
      regexEntries: model.model.regexMap.length,
      configBytes: Buffer.byteLength(cfg.content),
      files: assembled.files,
    },
  };
}

const samples: Record<Variant, Sample[]> = { plain: [], annotated: [], sharedBackend: [] };
const shapes = {} as Record<Variant, Shape>;
for (let run = 0; run < runs + 1; run += 1) {
  // Each variant goes first, second and third in turn.
  const order = variants.map((_, k) => variants[(k + run) % variants.length] as Variant);
  for (const variant of order) {
    const { sample, shape } = renderOnce(variant);
    if (run > 0) samples[variant].push(sample);
    shapes[variant] = shape;
  }
}
for (const variant of variants) {
  const { routes, backends } = shapes[variant];
  if (routes !== 2 * n || backends !== backendsOf[variant]) {
    throw new Error(
      `${variant}: ${routes} routes and ${backends} backends, not ${2 * n} and ${backendsOf[variant]}`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-annotation-'));
const sandbox = await startLocalSandbox({ dir });
const checkMs = {} as Record<Variant, number>;
try {
  for (const variant of variants) {
    const started = performance.now();
    const check = await checkBundle(shapes[variant].files, { socket: sandbox.socket });
    checkMs[variant] = performance.now() - started;
    if (!check.ok) throw new Error(`${variant}: haproxy -c refused the config: ${check.message}`);
  }
} finally {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}

const stats = (variant: Variant) => {
  const of = (pick: (sample: Sample) => number) => median(samples[variant].map(pick));
  return {
    model: of((s) => s.modelMs),
    context: of((s) => s.contextMs),
    liquid: of((s) => s.liquidMs),
    render: of((s) => s.contextMs + s.liquidMs),
    total: of((s) => s.modelMs + s.contextMs + s.liquidMs),
  };
};
const plain = stats('plain');
const annotated = stats('annotated');
const sharedBackend = stats('sharedBackend');
const round1 = (value: number): number => Math.round(value * 10) / 10;
const round2 = (value: number): number => Math.round(value * 100) / 100;

process.stdout.write(
  `${n} Ingresses, median of ${runs} runs (ms)\nvariant     routes  backends  regex map  model  context  liquid  render  total  check   haproxy.cfg bytes\n`,
);
for (const variant of variants) {
  const s = stats(variant);
  const shape = shapes[variant];
  const columns = [
    [shape.routes, 6, 0],
    [shape.backends, 8, 0],
    [shape.regexEntries, 9, 0],
    [s.model, 5, 0],
    [s.context, 7, 0],
    [s.liquid, 6, 0],
    [s.render, 6, 0],
    [s.total, 5, 0],
    [checkMs[variant], 6, 0],
    [shape.configBytes, 17, 0],
  ] as const;
  process.stdout.write(
    `${labels[variant].padEnd(10)}  ${columns.map(([value, width, digits]) => value.toFixed(digits).padStart(width)).join('  ')}\n`,
  );
}
process.stdout.write(
  `${JSON.stringify({
    ingresses: n,
    plainMs: round1(plain.total),
    annotatedMs: round1(annotated.total),
    ratio: round2(annotated.total / plain.total),
    modelRatio: round2(annotated.model / plain.model),
    renderRatio: round2(annotated.render / plain.render),
    checkPlainMs: round1(checkMs.plain),
    checkAnnotatedMs: round1(checkMs.annotated),
    configBytesPlain: shapes.plain.configBytes,
    configBytesAnnotated: shapes.annotated.configBytes,
    ratioSharedBackend: round2(sharedBackend.total / plain.total),
    checkSharedBackendMs: round1(checkMs.sharedBackend),
  })}\n`,
);
