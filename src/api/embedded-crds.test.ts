import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRecord } from '../is-record.ts';
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

  it('describes every field of every served version, so kubectl explain documents them', () => {
    /** The paths under `schema` that have no description. */
    function undescribed(schema: unknown, path: string): string[] {
      if (!isRecord(schema)) return [];
      // The API server forbids anything but the type on metadata (kubectl explains it anyway).
      const exempt = path.endsWith('.metadata');
      const own =
        exempt || (typeof schema.description === 'string' && schema.description !== '')
          ? []
          : [path];
      const properties = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
      return [
        ...own,
        ...properties.flatMap(([name, child]) => undescribed(child, `${path}.${name}`)),
        ...undescribed(schema.items, `${path}[]`),
        ...undescribed(schema.additionalProperties, `${path}.<name>`),
      ];
    }
    const versions = readEmbeddedCrds().flatMap((crd) => {
      const spec = crd.manifest.spec;
      return isRecord(spec) && Array.isArray(spec.versions) ? (spec.versions as unknown[]) : [];
    });
    expect(versions.length).toBeGreaterThan(0);
    for (const version of versions) {
      expect(isRecord(version) && isRecord(version.schema)).toBe(true);
      if (!isRecord(version) || !isRecord(version.schema)) continue;
      expect(undescribed(version.schema.openAPIV3Schema, String(version.name))).toEqual([]);
      const columns = Array.isArray(version.additionalPrinterColumns)
        ? (version.additionalPrinterColumns as unknown[])
        : [];
      expect(columns.map((column) => (isRecord(column) ? column.name : undefined))).toEqual([
        'Ready',
        'Reason',
        'Last Delivery',
        'Message',
        'Age',
      ]);
    }
  });
});
