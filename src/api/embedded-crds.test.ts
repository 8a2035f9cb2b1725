import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { embeddedChartDir } from '../render/index.ts';
import { readEmbeddedCrds } from './embedded-crds.ts';

describe('readEmbeddedCrds', () => {
  it('reads the HAProxyTemplateConfig CRD from the embedded chart', () => {
    expect(readEmbeddedCrds().map((crd) => crd.name)).toEqual([
      'haproxytemplateconfigs.haproxy-haptic.org',
    ]);
  });

  it('refuses a CRD of another API group in the chart', () => {
    const chart = mkdtempSync(join(tmpdir(), 'chart-'));
    cpSync(embeddedChartDir(), chart, { recursive: true });
    writeFileSync(
      join(chart, 'crds', 'zz-foreign.yaml'),
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec: {group: example.com, names: {plural: things}}\n',
    );
    expect(() => readEmbeddedCrds(chart)).toThrow(
      'zz-foreign.yaml document 1 in the embedded chart is not an apiextensions.k8s.io/v1 CustomResourceDefinition of group haproxy-haptic.org; reinstall the haptic package.',
    );
  });
});
