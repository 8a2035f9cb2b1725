/**
 * The CustomResourceDefinitions embedded in the package (`chart/crds/*.yaml`), read as helm
 * reads them when it installs the chart's crds/ (validation/yaml-schema.ts), and checked: only
 * CRDs of haptic's own API group are accepted, so the CRD Job can never be made to apply
 * anything else.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { HapticError, errorCodes } from '../errors.ts';
import { embeddedChartDir } from '../render/index.ts';
import { yaml11Schema } from '../validation/yaml-schema.ts';

/** The API group whose CRDs haptic owns. */
export const hapticApiGroup = 'haproxy-haptic.org';

/** One embedded CRD: its name and the manifest exactly as the chart has it (raw JSON). */
export interface EmbeddedCrd {
  readonly name: string;
  readonly manifest: Readonly<Record<string, unknown>>;
}

export function readEmbeddedCrds(chartDir: string = embeddedChartDir()): EmbeddedCrd[] {
  const dir = join(chartDir, 'crds');
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  return files.flatMap((file) =>
    loadAll(readFileSync(join(dir, file), 'utf8'), { schema: yaml11Schema })
      .filter((value) => value !== null && value !== undefined)
      .map((value, index) => checkCrd(value, `${file} document ${index + 1}`)),
  );
}

interface CrdShape {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown };
  spec?: { group?: unknown; names?: { plural?: unknown } };
}

function checkCrd(value: unknown, where: string): EmbeddedCrd {
  const crd = (typeof value === 'object' && value !== null ? value : {}) as CrdShape;
  const name = crd.metadata?.name;
  if (
    crd.apiVersion !== 'apiextensions.k8s.io/v1' ||
    crd.kind !== 'CustomResourceDefinition' ||
    crd.spec?.group !== hapticApiGroup ||
    typeof name !== 'string' ||
    name !== `${String(crd.spec.names?.plural)}.${hapticApiGroup}`
  ) {
    throw new HapticError(
      errorCodes.METADATA_INVALID,
      `${where} in the embedded chart is not an apiextensions.k8s.io/v1 CustomResourceDefinition of group ${hapticApiGroup}; reinstall the haptic package.`,
    );
  }
  return { name, manifest: crd as Record<string, unknown> };
}
