import { type Event, EVENT_ID, YAMLException, constructFromEvents, parseEvents } from 'js-yaml';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { yaml11Schema } from '../validation/yaml-schema.ts';
import { isRecord } from '../is-record.ts';

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

function invalid(message: string): HapticError {
  return new HapticError(errorCodes.RENDER_OUTPUT_INVALID, message);
}

function readStringMap(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw invalid(`${where} must be a map of strings.`);
  const entries = Object.entries(value);
  for (const [key, entry] of entries) {
    if (typeof entry !== 'string') {
      throw invalid(`${where}.${key} must be a string, not ${JSON.stringify(entry)}; quote it.`);
    }
  }
  // Own properties, so a `__proto__` key stays a key instead of setting the prototype.
  return Object.fromEntries(entries) as Record<string, string>;
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

const sourceLine = /^# Source: (.+)$/gm;

/** The template named by the last `# Source:` line of `text`, if any. */
function lastSource(text: string): string | undefined {
  let source: string | undefined;
  for (const match of text.matchAll(sourceLine)) source = match[1]?.trim();
  return source;
}

/** Where each document's content starts (-1 for an empty one), from the parser's events. */
function documentStarts(events: readonly Event[]): number[] {
  const starts: number[] = [];
  let awaitingRoot = false;
  for (const event of events) {
    if (event.type === EVENT_ID.DOCUMENT) awaitingRoot = true;
    else if (awaitingRoot) {
      awaitingRoot = false;
      starts.push('valueStart' in event ? event.valueStart : 'start' in event ? event.start : -1);
    }
  }
  return starts;
}

/** The template named by the last `# Source:` line between `from` and `to`. */
function sourceBetween(manifest: string, from: number, to: number): string {
  return lastSource(manifest.slice(from, Math.max(from, to))) ?? 'an unnamed template';
}

/**
 * The events of `manifest`, or RENDER_OUTPUT_INVALID naming the template where the YAML breaks.
 * The position of a js-yaml error is its `mark`.
 */
function eventsOf(manifest: string): Event[] {
  try {
    return parseEvents(manifest, {});
  } catch (error) {
    throw invalidYaml(manifest, error);
  }
}

/**
 * The error naming the template where the YAML breaks, with js-yaml's reason alone: its line
 * and column count in helm's whole output, not in the template named.
 */
function invalidYaml(manifest: string, error: unknown): HapticError {
  const yamlError = error instanceof YAMLException ? error : undefined;
  const position = yamlError?.mark?.position ?? manifest.length;
  const reason = yamlError?.reason ?? describeError(error).split('\n')[0] ?? '';
  return invalid(
    `helm rendered invalid YAML in ${sourceBetween(manifest, 0, position)}: ${reason}`,
  );
}

/**
 * Parses `helm template` output into objects, in helm's order, read as Kubernetes and Helm read
 * YAML (so `0440` is octal and `yes` a boolean; validation/yaml-schema.ts). Empty
 * documents are skipped; aliases, duplicate keys, unknown tags and anything that is not a
 * Kubernetes object are a RENDER_OUTPUT_INVALID error naming the template (helm's `# Source:`
 * line before the document).
 */
export function parseManifest(manifest: string): RenderedObject[] {
  const events = eventsOf(manifest);
  let values: unknown[];
  try {
    values = constructFromEvents(events, {
      source: manifest,
      schema: yaml11Schema,
      maxAliases: 0,
    });
  } catch (error) {
    throw invalidYaml(manifest, error);
  }
  const starts = documentStarts(events);
  const objects: RenderedObject[] = [];
  // A document's template is named after the previous document's content starts.
  let previousStart = 0;
  for (const [index, value] of values.entries()) {
    const start = starts[index] ?? -1;
    if (value !== null && value !== undefined) {
      objects.push(readObject(value, sourceBetween(manifest, previousStart, start)));
    }
    if (start >= 0) previousStart = start;
  }
  return objects;
}

/** A document marker: `---` at the start of a line, alone or before a space. */
const documentMarker = /^---(?=\s|$)/m;

/**
 * The objects of one kind, each parsed from its own document of `manifest` (one with the line
 * `kind: <kind>`), ahead of the whole: a head start for work that needs only them. What
 * parseManifest makes of the whole output stays the truth; a caller compares the two and
 * discards the head start when they differ. Throws as parseManifest does.
 */
export function documentsOfKind(manifest: string, kind: string): RenderedObject[] {
  const line = `\nkind: ${kind}\n`;
  return manifest
    .split(documentMarker)
    .filter((document) => `\n${document}\n`.includes(line))
    .flatMap((document) => parseManifest(document))
    .filter((object) => object.kind === kind);
}
