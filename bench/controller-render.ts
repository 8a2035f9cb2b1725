/**
 * Render + check time of the controller for 100, 1,000 and 5,000 Ingresses with the chart's
 * default HAProxyTemplateConfig: routing model and Liquid rendering (goal: 5,000 under 1 s,
 * growing linearly), then the sandboxed `haproxy -c` of the rendered files. Median of 5 runs
 * after one warm-up; the second render of the same snapshot must give the same digest.
 *
 *   node bench/controller-render.ts [sizes=100,1000,5000]
 */
import { checkBundle } from '../src/controller/bundle-check.ts';
import { renderBundle } from '../src/controller/render-bundle.ts';
import { readTemplateConfig } from '../src/controller/template-config.ts';
import { createTemplateEngine, parseTemplates } from '../src/controller/template-engine.ts';
import { defaultTemplateConfig, snapshotOf } from './controller-fixture.ts';

const sizes = (process.argv[2] ?? '100,1000,5000').split(',').map(Number);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const engine = createTemplateEngine();
const config = readTemplateConfig(defaultTemplateConfig());
if ('message' in config) throw new Error(config.message);
const templates = parseTemplates(engine, config);
if ('message' in templates) throw new Error(templates.message);

process.stdout.write(
  'ingresses  render ms  per 1k  check ms  haproxy.cfg+maps bytes  deterministic\n',
);
for (const n of sizes) {
  const snapshot = await snapshotOf(n);
  const request = { snapshot, templates, ingressClass: 'haptic', now: new Date() };
  const renders: number[] = [];
  const checks: number[] = [];
  let digest = '';
  let deterministic = true;
  let bytes = 0;
  for (let run = 0; run < 6; run += 1) {
    const started = performance.now();
    const outcome = renderBundle(engine, request);
    const renderMs = performance.now() - started;
    if (!outcome.ok) throw new Error(outcome.message);
    if (digest !== '' && digest !== outcome.digest) deterministic = false;
    digest = outcome.digest;
    bytes = outcome.files.reduce((sum, file) => sum + file.content.byteLength, 0);
    const checkStarted = performance.now();
    const check = await checkBundle(outcome.files);
    const checkMs = performance.now() - checkStarted;
    if (!check.ok) throw new Error(check.message);
    if (run > 0) {
      renders.push(renderMs);
      checks.push(checkMs);
    }
  }
  const render = median(renders);
  process.stdout.write(
    `${String(n).padStart(9)}  ${render.toFixed(1).padStart(9)}  ${((render / n) * 1000).toFixed(1).padStart(6)}  ${median(checks).toFixed(1).padStart(8)}  ${String(bytes).padStart(22)}  ${String(deterministic).padStart(13)}\n`,
  );
}
