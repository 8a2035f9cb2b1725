/**
 * The CustomResourceDefinitions embedded in the package (`chart/crds/*.yaml`), parsed and
 * checked: only CRDs of haptic's own API group are accepted, so the CRD Job can never be made
 * to apply anything else.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { HapticError, errorCodes } from '../errors.ts';
import { embeddedChartDir } from '../render/index.ts';

/** The API group whose CRDs haptic owns. */
export const hapticApiGroup = 'haproxy-haptic.org';

export function readEmbeddedCrds(
  chartDir: string = embeddedChartDir(),
): V1CustomResourceDefinition[] {
  const dir = join(chartDir, 'crds');
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((doc) => doc.toJS() as unknown)
      .filter((value) => value !== null)
      .map((value, index) => checkCrd(value, `${file} document ${index + 1}`)),
  );
}

function checkCrd(value: unknown, where: string): V1CustomResourceDefinition {
  const crd = value as Partial<V1CustomResourceDefinition>;
  if (
    crd.apiVersion !== 'apiextensions.k8s.io/v1' ||
    crd.kind !== 'CustomResourceDefinition' ||
    crd.spec?.group !== hapticApiGroup ||
    crd.metadata?.name !== `${crd.spec.names.plural}.${hapticApiGroup}`
  ) {
    throw new HapticError(
      errorCodes.METADATA_INVALID,
      `${where} in the embedded chart is not an apiextensions.k8s.io/v1 CustomResourceDefinition of group ${hapticApiGroup}; reinstall the haptic package.`,
    );
  }
  return crd as V1CustomResourceDefinition;
}
