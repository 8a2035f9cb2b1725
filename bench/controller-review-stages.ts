/**
 * Where an incremental admission review's time goes: the stages of rendering the state with
 * one Ingress changed (a new path each time, as bench/controller-admission.ts proposes), with
 * the work a pipeline keeps between renders (KeptWork: the model's sorted lists, backends,
 * lint, bytes) and one render process (its kept items and loop fragments). Columns, median
 * ms of `reviews` after two warm-ups: the routing model, the template context, its encoding
 * for the render process (part of the next column), the render process round trip (send,
 * unpack, Liquid, answer), assembling (lint, bytes, digest) and the sandboxed `haproxy -c`.
 *
 *   node bench/controller-review-stages.ts [ingresses=1000,5000] [reviews=20]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalSandbox } from '../dev/lib/local-sandbox.ts';
import { checkBundle } from '../src/controller/pipeline/bundle-check.ts';
import { ContextEncoder } from '../src/controller/render/context-transfer.ts';
import { KeptBackends } from '../src/controller/routing/model-backends.ts';
import {
  KeptBytes,
  KeptLint,
  type KeptWork,
  assembleBundle,
  requestModel,
} from '../src/controller/render/render-bundle.ts';
import { KeptModel } from '../src/controller/routing/routing-model.ts';
import { readTemplateConfig } from '../src/api/template-config.ts';
import { templateContext } from '../src/controller/render/template-engine.ts';
import { TemplateRenderer } from '../src/controller/render/template-renderer.ts';
import { readIngress } from '../src/validation/ingress-view.ts';
import { defaultTemplateConfig, snapshotOf } from './controller-fixture.ts';

const sizes = (process.argv[2] ?? '1000,5000').split(',').map(Number);
const reviews = Number(process.argv[3] ?? 20);
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const config = readTemplateConfig(defaultTemplateConfig());
if ('message' in config) throw new Error(config.message);
const dir = mkdtempSync(join(tmpdir(), 'bench-stages-'));
const sandbox = await startLocalSandbox({ dir });
const stages = ['model', 'context', 'encode', 'render', 'assemble', 'check'] as const;
const result: Record<string, Record<string, number>> = {};

function proposed(i: number): ReturnType<typeof readIngress> {
  return readIngress({
    kind: 'Ingress',
    metadata: { namespace: 'app', name: 'ing1' },
    spec: {
      ingressClassName: 'haptic',
      rules: [
        {
          host: 'h1.example.com',
          http: {
            paths: [
              {
                path: `/v${String(i)}`,
                pathType: 'Prefix',
                backend: { service: { name: 'svc1', port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
  });
}

try {
  process.stdout.write(`ingresses  ${stages.map((stage) => `${stage} ms`).join('  ')}\n`);
  for (const n of sizes) {
    const snapshot = await snapshotOf(n);
    const renderer = new TemplateRenderer();
    const kept: KeptWork = {
      backends: new KeptBackends(),
      model: new KeptModel(),
      lint: new KeptLint(),
      bytes: new KeptBytes(),
    };
    const times = Object.fromEntries(stages.map((stage) => [stage, [] as number[]]));
    const others = snapshot.ingresses.filter((view) => view.name !== 'ing1');
    // As one long-lived render process's encoder: lasting items cross once, then by id.
    const encoder = new ContextEncoder();
    for (let i = -1; i < reviews + 2; i += 1) {
      // Round -1 renders the current state, as the controller has before any review.
      const view = i < 0 ? undefined : proposed(i);
      if (typeof view === 'string') throw new Error(view);
      const request = {
        snapshot: view === undefined ? snapshot : { ...snapshot, ingresses: [...others, view] },
        ingressClass: 'haptic',
        now: new Date(),
      };
      const marks = [performance.now()];
      const model = requestModel(request, kept);
      marks.push(performance.now());
      const context = templateContext(model.model, 'haptic');
      marks.push(performance.now());
      encoder.encode(context);
      marks.push(performance.now());
      const rendered = await renderer.render({ key: 'bench/1', config, context });
      marks.push(performance.now());
      if (!rendered.ok) throw new Error(rendered.message);
      const bundle = assembleBundle(model, rendered.files, kept);
      marks.push(performance.now());
      if (!bundle.ok) throw new Error(bundle.message);
      const check = await checkBundle(bundle.files, { socket: sandbox.socket });
      marks.push(performance.now());
      if (!check.ok) throw new Error(check.message);
      if (i < 2) continue;
      stages.forEach((stage, s) => times[stage]?.push((marks[s + 1] ?? 0) - (marks[s] ?? 0)));
    }
    await renderer.close();
    const row = Object.fromEntries(
      stages.map((stage) => [stage, Math.round(median(times[stage] ?? []) * 10) / 10]),
    );
    result[String(n)] = row;
    process.stdout.write(
      `${String(n).padStart(9)}  ${stages.map((stage) => String(row[stage]).padStart(stage.length + 3)).join('  ')}\n`,
    );
  }
} finally {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify({ stagesMs: result })}\n`);
