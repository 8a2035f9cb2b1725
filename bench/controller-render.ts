/**
 * Render + check time of the controller for 100, 1,000 and 5,000 Ingresses with the chart's
 * default HAProxyTemplateConfig: routing model and Liquid rendering, once in-process (the
 * engine called directly) and once through the render process the controller uses
 * (template-renderer.ts: IPC, hard time and heap limits; goal: 5,000 under 1 s, growing
 * linearly), then `haproxy -c` of the rendered files in the check sandbox. Columns: the
 * routing model alone, Liquid alone in-process and through the render process (the same
 * context; the difference is the cost of the process: IPC both ways), the whole
 * renderBundle per 1,000 Ingresses, the check. Median of `runs` after one warm-up; both ways
 * and every run must give the same digest.
 *
 * Then the hard limits of the render process (a 1.5 s time limit, a 768 MB heap, Liquid's own
 * memory count out of the way, as template-renderer.test.ts sets them): how soon it stops
 * hostile templates, and how late a 20 ms timer of the controller's event loop fires at worst
 * meanwhile (in-process, the loop would stand still for the whole render). Goals: stopped
 * within the limit plus 1.5 s, the loop never 1 s late (a timer can be late by a few hundred
 * ms on two shared cores while the child allocates), and a render given a 400 ms deadline
 * stopped within 1.2 s.
 *
 *   node bench/controller-render.ts [sizes=100,1000,5000] [runs=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalSandbox } from '../dev/lib/local-sandbox.ts';
import { checkBundle } from '../src/controller/pipeline/bundle-check.ts';
import {
  assembleBundle,
  renderBundle,
  requestModel,
} from '../src/controller/render/render-bundle.ts';
import { readTemplateConfig } from '../src/api/template-config.ts';
import {
  createTemplateEngine,
  parseTemplates,
  renderTemplates,
  templateContext,
} from '../src/controller/render/template-engine.ts';
import { type RenderJob, TemplateRenderer } from '../src/controller/render/template-renderer.ts';
import { defaultTemplateConfig, snapshotOf } from './controller-fixture.ts';

const sizes = (process.argv[2] ?? '100,1000,5000').split(',').map(Number);
const runs = Number(process.argv[3] ?? 5);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const engine = createTemplateEngine();
const config = readTemplateConfig(defaultTemplateConfig());
if ('message' in config) throw new Error(config.message);
const parsed = parseTemplates(engine, config);
if ('message' in parsed) throw new Error(parsed.message);
const renderer = new TemplateRenderer();
const dir = mkdtempSync(join(tmpdir(), 'bench-render-'));
const sandbox = await startLocalSandbox({ dir });

const timed = async <T>(work: () => T | Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
};

/** The render process's limits in the hostile cases: time and heap, not Liquid's count. */
const hardLimits = {
  parseLimit: 1024 * 1024,
  renderLimitMs: 1_500,
  memoryLimit: 1024 * 1024 * 1024,
  heapMb: 768,
};

const hostile: readonly (readonly [string, string])[] = [
  ['a 20,000,000 range', '{% for i in (1..20000000) %}{% endfor %}'],
  ['a filter allocating beyond the heap', '{{ (1..60000000) | join: "," | size }}'],
  [
    'a filter computing past the time limit',
    '{{ (1..5000000) | join: "," | split: "," | sort | join: "," | size }}',
  ],
  [
    'loops writing output Liquid does not count',
    '{% for i in (1..3000) %}{% for j in (1..3000) %}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{% endfor %}{% endfor %}',
  ],
];

/** Renders `job` with `hard` while timing how late a 20 ms timer of this event loop fires. */
async function renderWatchingLoop(hard: TemplateRenderer, job: RenderJob) {
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 20);
    last = now;
  }, 20);
  try {
    const [outcome, ms] = await timed(() => hard.render(job));
    if (outcome.ok) throw new Error(`${job.config.name}: a hostile template rendered`);
    return { ms, worstLateMs: worst };
  } finally {
    clearInterval(timer);
  }
}

/** How soon the render process stops each hostile template, and a render at a deadline. */
async function hardLimitsTable(): Promise<void> {
  const hard = new TemplateRenderer(hardLimits);
  const templateConfig = (template: string) => {
    const read = readTemplateConfig({
      kind: 'HAProxyTemplateConfig',
      metadata: { namespace: 'bench', name: 'hostile' },
      spec: { haproxyConfig: { template } },
    });
    if ('message' in read) throw new Error(read.message);
    return read;
  };
  try {
    process.stdout.write(
      `\nhostile template (limit ${hardLimits.renderLimitMs} ms)           stopped after ms  worst event-loop lateness ms\n`,
    );
    for (const [what, template] of hostile) {
      const job = { key: undefined, config: templateConfig(template), context: {} };
      const { ms, worstLateMs } = await renderWatchingLoop(hard, job);
      process.stdout.write(
        `${what.padEnd(48)}  ${ms.toFixed(0).padStart(16)}  ${worstLateMs.toFixed(0).padStart(28)}\n`,
      );
    }
    const sorting = templateConfig(
      '{{ (1..1500000) | join: "," | split: "," | sort_natural | join: "," | size }}',
    );
    const [late, lateMs] = await timed(() =>
      hard.render({
        key: undefined,
        config: sorting,
        context: {},
        deadline: performance.now() + 400,
      }),
    );
    if (late.ok) throw new Error('the render at a 400 ms deadline finished');
    process.stdout.write(
      `${'a render given a 400 ms deadline'.padEnd(48)}  ${lateMs.toFixed(0).padStart(16)}\n`,
    );
  } finally {
    await hard.close();
  }
}

try {
  process.stdout.write(
    'ingresses  model ms  render in-process ms  render process ms  overhead ms  full render per 1k ms  check ms  haproxy.cfg+maps bytes  deterministic\n',
  );
  for (const n of sizes) {
    const snapshot = await snapshotOf(n);
    const request = {
      snapshot,
      templates: { key: 'bench/1', config },
      ingressClass: 'haptic',
      now: new Date(),
    };
    const models: number[] = [];
    const inProcess: number[] = [];
    const viaProcess: number[] = [];
    const full: number[] = [];
    const checks: number[] = [];
    const digests = new Set<string>();
    let bytes = 0;
    for (let run = 0; run < runs + 1; run += 1) {
      const [model, modelMs] = await timed(() => requestModel(request));
      const context = templateContext(model.model, 'haptic');
      const [local, localMs] = await timed(() => renderTemplates(engine, parsed, context));
      const [remote, remoteMs] = await timed(() =>
        renderer.render({ ...request.templates, context }),
      );
      const [bundle, fullMs] = await timed(() => renderBundle(renderer, request));
      if (!local.ok) throw new Error(local.message);
      if (!remote.ok) throw new Error(remote.message);
      if (!bundle.ok) throw new Error(bundle.message);
      for (const files of [local.files, remote.files]) {
        const assembled = assembleBundle(model, files);
        if (!assembled.ok) throw new Error(assembled.message);
        digests.add(assembled.digest);
      }
      digests.add(bundle.digest);
      bytes = bundle.files.reduce((sum, file) => sum + file.content.byteLength, 0);
      const [check, checkMs] = await timed(() =>
        checkBundle(bundle.files, { socket: sandbox.socket }),
      );
      if (!check.ok) throw new Error(check.message);
      if (run > 0) {
        models.push(modelMs);
        inProcess.push(localMs);
        viaProcess.push(remoteMs);
        full.push(fullMs);
        checks.push(checkMs);
      }
    }
    const local = median(inProcess);
    const remote = median(viaProcess);
    const columns = [
      [n, 9, 0],
      [median(models), 8, 1],
      [local, 20, 1],
      [remote, 17, 1],
      [remote - local, 11, 1],
      [(median(full) / n) * 1000, 21, 1],
      [median(checks), 8, 1],
      [bytes, 22, 0],
    ] as const;
    process.stdout.write(
      `${columns.map(([value, width, digits]) => value.toFixed(digits).padStart(width)).join('  ')}  ${String(digests.size === 1).padStart(13)}\n`,
    );
  }
  await hardLimitsTable();
} finally {
  await renderer.close();
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
