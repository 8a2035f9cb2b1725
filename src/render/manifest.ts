import { parseAllDocuments } from 'yaml';
import { HapticError, errorCodes } from '../errors.ts';

/** The metadata every rendered object carries. */
export interface RenderedMetadata {
  readonly name: string;
  /** Absent for cluster-scoped objects (and for namespaced ones the template left it out of). */
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** Helm hook annotations of an object (`helm.sh/hook*`). */
export interface HookInfo {
  /** Events such as `pre-install`, in the order written. */
  readonly events: readonly string[];
  /** `helm.sh/hook-weight`, 0 when absent. */
  readonly weight: number;
  /** `helm.sh/hook-delete-policy` entries, empty when absent. */
  readonly deletePolicies: readonly string[];
}

/** One Kubernetes object from `helm template` output. */
export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: RenderedMetadata;
  /** The template that produced it, from helm's `# Source:` line (e.g. `haptic/templates/x.yaml`). */
  readonly source: string;
  /** Present when the object is a Helm hook. */
  readonly hook?: HookInfo;
  /** The whole object as rendered (the fields above included). */
  readonly body: Readonly<Record<string, unknown>>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): HapticError {
  return new HapticError(errorCodes.RENDER_OUTPUT_INVALID, message);
}

function readStringMap(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw invalid(`${where} must be a map of strings.`);
  const result: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') {
      throw invalid(`${where}.${key} must be a string, not ${JSON.stringify(entry)}; quote it.`);
    }
    result[key] = entry;
  }
  return result;
}

function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function readHook(
  annotations: Readonly<Record<string, string>>,
  where: string,
): HookInfo | undefined {
  const events = splitList(annotations['helm.sh/hook']);
  if (events.length === 0) return undefined;
  const weightText = annotations['helm.sh/hook-weight'] ?? '0';
  const weight = Number(weightText);
  if (!Number.isInteger(weight)) {
    throw invalid(`${where}: helm.sh/hook-weight ${JSON.stringify(weightText)} is not an integer.`);
  }
  return { events, weight, deletePolicies: splitList(annotations['helm.sh/hook-delete-policy']) };
}

function readObject(value: unknown, source: string): RenderedObject {
  const where = `the object from ${source}`;
  if (!isRecord(value)) throw invalid(`${where} is not a map.`);
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    throw invalid(`${where} has no apiVersion.`);
  }
  if (typeof kind !== 'string' || kind === '') throw invalid(`${where} has no kind.`);
  if (!isRecord(metadata) || typeof metadata.name !== 'string' || metadata.name === '') {
    throw invalid(`${where} (${kind}) has no metadata.name.`);
  }
  const named = `${kind} ${metadata.name} from ${source}`;
  const labels = readStringMap(metadata.labels, `${named}: metadata.labels`);
  const annotations = readStringMap(metadata.annotations, `${named}: metadata.annotations`);
  const hook = readHook(annotations, named);
  const { namespace } = metadata;
  if (namespace !== undefined && typeof namespace !== 'string') {
    throw invalid(`${named}: metadata.namespace must be a string.`);
  }
  return {
    apiVersion,
    kind,
    metadata: {
      name: metadata.name,
      ...(namespace === undefined ? {} : { namespace }),
      labels,
      annotations,
    },
    source,
    ...(hook === undefined ? {} : { hook }),
    body: value,
  };
}

/** The template named by helm's `# Source:` line in a document's text, if any. */
function sourceOf(text: string): string {
  const match = /^# Source: (.+)$/m.exec(text);
  return match?.[1]?.trim() ?? 'an unnamed template';
}

/**
 * Parses `helm template` output into objects, in helm's order. YAML 1.1, as Kubernetes and
 * Helm read it (so `0440` is octal and `yes` a boolean). Empty documents are skipped; anything
 * that is not a Kubernetes object is a RENDER_OUTPUT_INVALID error naming the template.
 */
export function parseManifest(manifest: string): RenderedObject[] {
  const objects: RenderedObject[] = [];
  let previousEnd = 0;
  for (const document of parseAllDocuments(manifest, { version: '1.1', prettyErrors: false })) {
    // The document's own text plus the comments before it (helm's `# Source:` line).
    const end = document.range[2];
    const source = sourceOf(manifest.slice(previousEnd, end));
    previousEnd = end;
    const [error] = document.errors;
    if (error !== undefined) {
      throw invalid(`helm rendered invalid YAML in ${source}: ${error.message}`);
    }
    const value: unknown = document.toJS({ maxAliasCount: 0 });
    if (value === null || value === undefined) continue;
    objects.push(readObject(value, source));
  }
  return objects;
}
