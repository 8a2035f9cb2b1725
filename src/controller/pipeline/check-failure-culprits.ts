/**
 * Which Ingresses a failed `haproxy -c` is about: each failing line of the rendered files is
 * read for values that came from Ingresses through the routing model (certificate files,
 * annotation values, route keys and hosts, backend names and server endpoints), and the
 * Ingresses those values came from are named, with the field and HAProxy's reason. Pure.
 *
 * The template is to blame, and no Ingress is named, when a failing line carries no value of
 * an Ingress, or when every line of the same shape (the line with its Ingress values taken
 * out) fails: the template writes them all, and leaving Ingresses out would hide its error.
 * Leaving out every served Ingress is no isolation either, so that is the template's too.
 */
import type { Problem } from '../../problem.ts';
import { objectKey } from '../routing/cluster-snapshot.ts';
import type { CheckFailureLocation } from '../render/check-failure-locations.ts';
import type { ExcludedIngress, RoutingModel } from '../routing/model-types.ts';
import { annotationPrefix } from '../../validation/ingress-checks.ts';
import type { IngressView } from '../../validation/ingress-view.ts';

export interface CulpritInput {
  readonly locations: readonly CheckFailureLocation[];
  /** The rendered files, path → text. */
  readonly files: ReadonlyMap<string, string>;
  readonly model: RoutingModel;
  /** The Ingresses the model serves, as read (for the fields messages name). */
  readonly ingresses: readonly IngressView[];
  /** Who refused the lines, for messages. @default 'haproxy -c rejects' */
  readonly refusedBy?: string;
}

/** Why the template is to blame rather than Ingresses. */
export const templateBlameReasons = {
  /** HAProxy names a line that is not in the rendered files. */
  LineNotRendered: 'LineNotRendered',
  /** A failing line carries no value of an Ingress: the template wrote it by itself. */
  NoIngressValue: 'NoIngressValue',
  /** Every line of the failing line's shape fails, whichever Ingress it is for. */
  EveryLineAlike: 'EveryLineAlike',
  /** HAProxy named no line. */
  NoLineNamed: 'NoLineNamed',
  /** Leaving out the Ingresses named would leave out every served one. */
  EveryIngressNamed: 'EveryIngressNamed',
} as const;

export type TemplateBlameReason = (typeof templateBlameReasons)[keyof typeof templateBlameReasons];

export type CulpritVerdict =
  | { readonly blame: 'ingresses'; readonly excluded: readonly ExcludedIngress[] }
  | ({ readonly blame: 'template' } & Problem<TemplateBlameReason>);

function templateBlame(reason: TemplateBlameReason, message: string): CulpritVerdict {
  return { blame: 'template', reason, message };
}

/** Kinds of Ingress values, most telling first: a line is blamed on its most telling kind. */
const kinds = ['certificate', 'annotation', 'route', 'backend'] as const;
type OriginKind = (typeof kinds)[number];

interface Origin {
  readonly kind: OriginKind;
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
  /** What of the Ingress the value is, for messages ("its TLS Secret app/shop"). */
  readonly what: string;
}

const fixes: Readonly<Record<OriginKind, string>> = {
  certificate: 'give the Secret a certificate and key HAProxy can load',
  annotation: 'change the annotation to a value the template can use',
  route: 'change the host or path',
  backend: "check the Service's ports and endpoints",
};

/** Bytes that end an Ingress value inside a line: HAProxy's spaces, quotes and punctuation. */
const boundary = /[\s"'(),;=[\]{}]/;
/** Longest run of words an annotation value may span. */
const maxWords = 8;

type OriginIndex = ReadonlyMap<string, readonly Origin[]>;

function portMatches(port: IngressView['rules'][number]['paths'][number], servicePort: string) {
  const wanted = port.backend?.port;
  return wanted?.number === undefined
    ? wanted?.name === servicePort
    : String(wanted.number) === servicePort;
}

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}

function indexOrigins(model: RoutingModel, views: readonly IngressView[]): OriginIndex {
  const index = new Map<string, Origin[]>();
  const add = (value: string, origin: Origin): void => {
    if (value === '' || value === '*') return;
    const list = index.get(value) ?? [];
    list.push(origin);
    index.set(value, list);
  };
  for (const ingress of model.ingresses) {
    const { namespace, name } = ingress;
    // Templates see the annotations without their prefix (annotations.timeout).
    for (const [short, value] of Object.entries(ingress.annotations)) {
      const annotation = `${annotationPrefix}${short}`;
      add(value.trim(), {
        kind: 'annotation',
        namespace,
        name,
        field: `metadata.annotations[${JSON.stringify(annotation)}]`,
        what: `its annotation ${annotation}`,
      });
    }
  }
  for (const view of views) {
    const { namespace, name } = view;
    const key = objectKey(namespace, name);
    view.tls.forEach((tls, i) => {
      const secret = objectKey(namespace, tls.secretName ?? '');
      for (const certificate of model.certificates) {
        if (certificate.secret !== secret) continue;
        add(certificate.file, {
          kind: 'certificate',
          namespace,
          name,
          field: `spec.tls[${i}].secretName`,
          what: `its TLS Secret ${secret}`,
        });
      }
    });
    view.rules.forEach((rule, i) => {
      const host = rule.host === undefined || rule.host === '' ? '*' : rule.host;
      rule.paths.forEach((path, j) => {
        const field = `spec.rules[${i}].http.paths[${j}]`;
        const trimmed = trimSlash(path.path ?? '/');
        for (const route of model.routes) {
          if (route.ingress !== key || route.host !== host || route.path !== trimmed) continue;
          const what = `its route ${host}${trimmed}`;
          add(route.host, { kind: 'route', namespace, name, field: `spec.rules[${i}].host`, what });
          for (const value of [route.exactKey, route.prefixKey]) {
            add(value, { kind: 'route', namespace, name, field: `${field}.path`, what });
          }
        }
        for (const backend of model.backends) {
          if (
            backend.namespace !== namespace ||
            backend.service !== path.backend?.serviceName ||
            !portMatches(path, backend.servicePort)
          ) {
            continue;
          }
          const origin: Origin = {
            kind: 'backend',
            namespace,
            name,
            field: `${field}.backend.service`,
            what: `its Service ${objectKey(backend.namespace, backend.service)} port ${backend.servicePort}`,
          };
          add(backend.name, origin);
          for (const server of backend.servers) {
            add(server.endpoint, origin);
            add(server.address, origin);
          }
        }
      });
    });
  }
  return index;
}

interface Occurrence {
  readonly start: number;
  readonly end: number;
  readonly origins: readonly Origin[];
}

/** Ingress values in a line: runs of up to `maxWords` words, longest first, not overlapping. */
function occurrences(line: string, index: OriginIndex): Occurrence[] {
  const words: { start: number; end: number }[] = [];
  let start = -1;
  for (let i = 0; i <= line.length; i += 1) {
    const isBoundary = i === line.length || boundary.test(line.charAt(i));
    if (!isBoundary && start < 0) start = i;
    if (isBoundary && start >= 0) {
      words.push({ start, end: i });
      start = -1;
    }
  }
  const found: Occurrence[] = [];
  let i = 0;
  while (i < words.length) {
    const from = words[i]?.start ?? 0;
    let taken = 1;
    for (let n = Math.min(maxWords, words.length - i); n >= 1; n -= 1) {
      const to = words[i + n - 1]?.end ?? from;
      const origins = index.get(line.slice(from, to));
      if (origins !== undefined) {
        found.push({ start: from, end: to, origins });
        taken = n;
        break;
      }
    }
    i += taken;
  }
  return found;
}

/** A pattern for lines the same template line writes: the line with its values as wildcards. */
function shapeOf(line: string, found: readonly Occurrence[]): RegExp {
  let pattern = '';
  let at = 0;
  for (const occurrence of found) {
    pattern += `${escapeRegExp(line.slice(at, occurrence.start))}(.+?)`;
    at = occurrence.end;
  }
  return new RegExp(`^${pattern}${escapeRegExp(line.slice(at))}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The rendered file HAProxy means: the same path, or the path under the check's directory. */
function fileNamed(files: ReadonlyMap<string, string>, name: string): string | undefined {
  const plain = name.replace(/^\.\//, '');
  if (files.has(plain)) return plain;
  return [...files.keys()].find((path) => plain.endsWith(`/${path}`));
}

function blamed(found: readonly Occurrence[]): readonly Origin[] {
  for (const kind of kinds) {
    const origins = found.flatMap((occurrence) =>
      occurrence.origins.filter((o) => o.kind === kind),
    );
    if (origins.length > 0) return origins;
  }
  return [];
}

interface FailingLine {
  readonly location: CheckFailureLocation;
  readonly file: string;
  readonly text: readonly string[];
  readonly line: string;
}

export function checkFailureCulprits(input: CulpritInput): CulpritVerdict {
  const served = new Set(input.model.ingresses.map((i) => objectKey(i.namespace, i.name)));
  const index = indexOrigins(
    input.model,
    input.ingresses.filter((view) => served.has(objectKey(view.namespace, view.name))),
  );
  const failing = new Map<string, Set<number>>();
  const lines: FailingLine[] = [];
  for (const location of input.locations) {
    const file = fileNamed(input.files, location.file);
    const text = file === undefined ? undefined : input.files.get(file)?.split('\n');
    const line = text?.[location.line - 1];
    if (file === undefined || text === undefined || line === undefined) {
      return templateBlame(
        templateBlameReasons.LineNotRendered,
        `${location.file}:${location.line} is not a line of the rendered files.`,
      );
    }
    failing.set(file, (failing.get(file) ?? new Set<number>()).add(location.line));
    lines.push({ location, file, text, line });
  }
  const culprits = new Map<string, ExcludedIngress>();
  for (const { location, file, text, line } of lines) {
    const where = `${location.file}:${location.line}`;
    const found = occurrences(line, index);
    const origins = blamed(found);
    if (origins.length === 0) {
      return templateBlame(
        templateBlameReasons.NoIngressValue,
        `${where} carries no value of an Ingress.`,
      );
    }
    const shape = shapeOf(line, found);
    const alike = text.flatMap((other, i) => (shape.test(other) ? [i + 1] : []));
    if (alike.length > 1 && alike.every((n) => failing.get(file)?.has(n) === true)) {
      return templateBlame(
        templateBlameReasons.EveryLineAlike,
        `every line written like ${where} fails, whichever Ingress it is for.`,
      );
    }
    const reason = /[.!]$/.test(location.reason) ? location.reason : `${location.reason}.`;
    for (const origin of origins) {
      const key = objectKey(origin.namespace, origin.name);
      if (culprits.has(key)) continue;
      culprits.set(key, {
        namespace: origin.namespace,
        name: origin.name,
        field: origin.field,
        message: `Ingress ${key} is not served: ${input.refusedBy ?? 'haproxy -c rejects'} the line of ${file} made from ${origin.what} (${origin.field}): ${reason} To be served again, ${fixes[origin.kind]}; the other Ingresses are served without it.`,
      });
    }
  }
  if (culprits.size === 0) {
    return templateBlame(templateBlameReasons.NoLineNamed, 'HAProxy named no line.');
  }
  if (culprits.size >= served.size) {
    return templateBlame(
      templateBlameReasons.EveryIngressNamed,
      'it would leave out every Ingress.',
    );
  }
  const sorted = [...culprits.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { blame: 'ingresses', excluded: sorted.map(([, entry]) => entry) };
}
