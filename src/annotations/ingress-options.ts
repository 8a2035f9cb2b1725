/**
 * An Ingress's annotations read into its options, with a finding for each annotation that is
 * not served as written:
 * - AnnotationInvalid: a supported annotation whose value does not parse; the Ingress's routes
 *   are left out until it is fixed (serving them without it could open what it closes);
 * - AnnotationRefused: a snippet, or an annotation whose absence would open the routes
 *   (authentication); the routes are left out;
 * - AnnotationIgnored: an annotation under ingress-nginx's or HAProxy's prefix that this
 *   controller does not read; the routes are served without it (one finding per Ingress).
 * Pure; `haptic ingress lint` and the routing model read the same findings.
 */
import type { Problem } from '../problem.ts';
import {
  type IngressOptions,
  annotationsByName,
  defaultIngressOptions,
  haproxyPrefix,
  nginxPrefix,
  refusalOf,
} from './annotation-catalog.ts';
import { isExpected } from './annotation-values.ts';

export const annotationReasons = {
  /** A supported annotation's value does not parse; the Ingress's routes are left out. */
  AnnotationInvalid: 'AnnotationInvalid',
  /** A snippet or an authentication annotation; the Ingress's routes are left out. */
  AnnotationRefused: 'AnnotationRefused',
  /** Annotations of a supported prefix this controller does not read; served without them. */
  AnnotationIgnored: 'AnnotationIgnored',
} as const;

export type AnnotationReason = (typeof annotationReasons)[keyof typeof annotationReasons];

export interface AnnotationFinding extends Problem<AnnotationReason> {
  /** `metadata.annotations["nginx.ingress.kubernetes.io/rewrite-target"]`. */
  readonly field: string;
  /** The annotations' full names (several for AnnotationIgnored). */
  readonly annotations: readonly string[];
}

export interface ReadOptions {
  readonly options: IngressOptions;
  readonly findings: readonly AnnotationFinding[];
  /** Some finding leaves the routes out (AnnotationInvalid, AnnotationRefused). */
  readonly blocking: boolean;
}

function fieldOf(name: string): string {
  return `metadata.annotations[${JSON.stringify(name)}]`;
}

/** A hostile value, bounded and quoted for a message. */
function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** The first `count` names, then how many more (an Event's message stays short). */
function namedAtMost(names: readonly string[], count: number): string {
  const shownNames = names
    .slice(0, count)
    .map((name) => (name.length > 100 ? `${name.slice(0, 100)}…` : name));
  const more = names.length - count;
  return more > 0 ? `${shownNames.join(', ')} and ${more} more` : shownNames.join(', ');
}

const plainIngress: ReadOptions = { options: defaultIngressOptions, findings: [], blocking: false };

/** The options of an Ingress with these annotations, `label` its `namespace/name`. */
export function readIngressOptions(
  annotations: Readonly<Record<string, string>>,
  label: string,
): ReadOptions {
  let options: { -readonly [K in keyof IngressOptions]: IngressOptions[K] } | undefined;
  const findings: AnnotationFinding[] = [];
  const ignored: string[] = [];
  for (const name of Object.keys(annotations).sort()) {
    if (!name.startsWith(nginxPrefix) && !name.startsWith(haproxyPrefix)) continue;
    const value = annotations[name] ?? '';
    const refused = refusalOf(name);
    if (refused !== undefined) {
      findings.push({
        reason: annotationReasons.AnnotationRefused,
        field: fieldOf(name),
        annotations: [name],
        message: `Ingress ${label} has the annotation ${name}, which is refused: ${refused.why}. Its routes are left out until the annotation is removed.`,
      });
      continue;
    }
    const supported = annotationsByName.get(name);
    if (supported === undefined) {
      ignored.push(name);
      continue;
    }
    options ??= { ...defaultIngressOptions };
    const parsed = supported.apply(value, options);
    if (isExpected(parsed)) {
      findings.push({
        reason: annotationReasons.AnnotationInvalid,
        field: fieldOf(name),
        annotations: [name],
        message: `Ingress ${label} has ${fieldOf(name)} ${shown(value)}, which is not ${parsed.expected}. Its routes are left out until the value is fixed.`,
      });
    }
  }
  if (ignored.length > 0) {
    findings.push({
      reason: annotationReasons.AnnotationIgnored,
      field: fieldOf(ignored[0] ?? ''),
      annotations: ignored,
      message: `Ingress ${label} has annotations this controller does not read: ${namedAtMost(ignored, 10)}. The routes are served without them; docs/ingress-migration.md says what to use instead.`,
    });
  }
  if (options === undefined && findings.length === 0) return plainIngress;
  return {
    options: options ?? defaultIngressOptions,
    findings,
    blocking: findings.some((finding) => finding.reason !== annotationReasons.AnnotationIgnored),
  };
}
