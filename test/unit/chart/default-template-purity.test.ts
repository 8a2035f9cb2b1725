/**
 * The chart's default templates are pure: each file's output is a function of the context
 * names it reads (no `assign`, no name computed when rendering), so the controller reuses a
 * file whose inputs did not change (kept-files.ts) and the loop bodies of unchanged items
 * (template-fragments.ts). One `assign` in haproxy.cfg made every admission review render the
 * whole file again (3-4× the review time at 5,000 Ingresses).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import {
  createTemplateEngine,
  escapeFilterName,
} from '../../../src/controller/render/template-engine.ts';
import { templateInputs } from '../../../src/controller/render/template-purity.ts';

const dir = join(projectRoot, 'chart/files/default-template');
const engine = createTemplateEngine();

describe('the default templates', () => {
  it.each(readdirSync(dir).filter((name) => name.endsWith('.liquid')))(
    '%s reads its context names only, so an unchanged render is reused',
    (name) => {
      const parsed = engine.parse(readFileSync(join(dir, name), 'utf8'));
      expect(templateInputs(parsed, escapeFilterName(engine))).toBeDefined();
    },
  );
});
