/**
 * Ingresses are hostile input: their hosts, paths, annotations and the Secrets they name end
 * up in haproxy.cfg and map files. Every value that reaches a template passes one of these
 * checks first; an Ingress with one bad value is left out whole (with the reason), never
 * half-served, and never breaks the other Ingresses.
 *
 * A check returns a problem (`{ field, message }`) or nothing. Messages name the Ingress and
 * the field and say what to write instead.
 */

export interface IngressProblem {
  /** The field, as kubectl explain names it: `spec.rules[0].host`. */
  readonly field: string;
  readonly message: string;
}

/**
 * Path types HAProxy serves; ImplementationSpecific is served as Prefix, and every path of an
 * Ingress with use-regex or rewrite-target is a Regex (ingress-nginx's reading).
 */
export type PathType = 'Exact' | 'Prefix' | 'Regex';

const dnsLabel = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const hostPattern = new RegExp(`^(\\*\\.)?${dnsLabel}(\\.${dnsLabel})*$`);
const dns1123Subdomain = new RegExp(`^${dnsLabel}(\\.${dnsLabel})*$`);
const dns1123Label = new RegExp(`^${dnsLabel}$`);
const dns1035Label = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
/**
 * Characters of a path: RFC 3986 `pchar` and `/`, without `%` sequences that decode to control
 * characters. No whitespace, quotes, backslash, `#` or `?`: HAProxy's map files split on
 * whitespace and treat `#` as a comment.
 */
const pathPattern = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;
const percentPattern = /%([0-9A-Fa-f]{2})/g;
/** Annotations a template may read: only this prefix, only these characters. */
export const annotationPrefix = 'haproxy-haptic.org/';
const annotationValuePattern = /^[A-Za-z0-9 ._:/=,+@%*-]{0,1024}$/;
const annotationNamePattern = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/;

/** Longest host HAProxy matches here (DNS limit). */
const maxHostLength = 253;
/** Longest path accepted. @default 2048 */
const maxPathLength = 2048;

/**
 * The Ingress's own namespace: a DNS label, as the API server guarantees. Checked anyway,
 * because it becomes part of backend and file names.
 */
export function namespaceProblem(namespace: string, ingress: string): IngressProblem | undefined {
  if (!dns1123Label.test(namespace)) {
    return {
      field: 'metadata.namespace',
      message: `Ingress ${ingress} is in the namespace ${JSON.stringify(namespace.slice(0, 80))}, which is not a DNS label; create it in a namespace named with a-z, 0-9 and "-".`,
    };
  }
  return undefined;
}

export function hostProblem(
  host: string,
  field: string,
  ingress: string,
): IngressProblem | undefined {
  if (host.length > maxHostLength || !hostPattern.test(host)) {
    return {
      field,
      message: `Ingress ${ingress} has ${field} ${JSON.stringify(host.slice(0, 80))}, which is not a lower-case DNS name (an optional leading "*." wildcard, then labels of a-z, 0-9 and "-"); fix the host.`,
    };
  }
  return undefined;
}

export function pathProblem(
  path: string,
  field: string,
  ingress: string,
): IngressProblem | undefined {
  const bad = (why: string): IngressProblem => ({
    field,
    message: `Ingress ${ingress} has ${field} ${JSON.stringify(path.slice(0, 80))}, which ${why}; fix the path.`,
  });
  if (path.length > maxPathLength) return bad(`is longer than ${maxPathLength} characters`);
  if (!pathPattern.test(path)) {
    return bad(
      'is not an absolute URL path (it must start with "/" and contain only letters, digits and -._~!$&\'()*+,;=:@/% — no spaces, quotes, "#", "?" or control characters)',
    );
  }
  for (const match of path.matchAll(percentPattern)) {
    const code = parseInt(match[1] ?? '0', 16);
    if (code < 0x20 || code === 0x7f || code === 0x23) {
      return bad(`encodes the control character or "#" ${match[0]}`);
    }
  }
  return undefined;
}

export function pathTypeOf(
  value: string | undefined,
  field: string,
  ingress: string,
): PathType | IngressProblem {
  if (value === 'Exact' || value === 'Prefix') return value;
  if (value === 'ImplementationSpecific') return 'Prefix';
  return {
    field,
    message: `Ingress ${ingress} has ${field} ${JSON.stringify(value ?? null)}; use Exact, Prefix or ImplementationSpecific.`,
  };
}

export function serviceNameProblem(
  name: string,
  field: string,
  ingress: string,
): IngressProblem | undefined {
  if (!dns1035Label.test(name)) {
    return {
      field,
      message: `Ingress ${ingress} has ${field} ${JSON.stringify(name.slice(0, 80))}, which is not a Service name; name an existing Service.`,
    };
  }
  return undefined;
}

export function secretNameProblem(
  name: string,
  field: string,
  ingress: string,
): IngressProblem | undefined {
  if (name.length > 253 || !dns1123Subdomain.test(name)) {
    return {
      field,
      message: `Ingress ${ingress} has ${field} ${JSON.stringify(name.slice(0, 80))}, which is not a Secret name; name a kubernetes.io/tls Secret of the Ingress's namespace.`,
    };
  }
  return undefined;
}

export function portProblem(
  port: { readonly number?: number | undefined; readonly name?: string | undefined } | undefined,
  field: string,
  ingress: string,
): IngressProblem | undefined {
  if (port?.number !== undefined) {
    if (Number.isInteger(port.number) && port.number >= 1 && port.number <= 65535) return undefined;
  } else if (port?.name !== undefined && dns1035Label.test(port.name)) {
    return undefined;
  }
  return {
    field,
    message: `Ingress ${ingress} has an invalid ${field}; give the Service port as a number from 1 to 65535 or as a port name.`,
  };
}

/**
 * The annotations a template may read (those under {@link annotationPrefix}), or the first
 * problem. Other annotations are ignored, never passed on.
 */
export function templateAnnotations(
  annotations: Readonly<Record<string, string>>,
  ingress: string,
): Readonly<Record<string, string>> | IngressProblem {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(annotations).sort()) {
    if (!key.startsWith(annotationPrefix)) continue;
    const name = key.slice(annotationPrefix.length);
    const value = annotations[key] ?? '';
    const field = `metadata.annotations[${JSON.stringify(key)}]`;
    if (!annotationNamePattern.test(name)) {
      return {
        field,
        message: `Ingress ${ingress} has the annotation ${JSON.stringify(key.slice(0, 80))}, whose name is not a lower-case DNS label; rename it.`,
      };
    }
    if (!annotationValuePattern.test(value)) {
      return {
        field,
        message: `Ingress ${ingress} has ${field} with characters templates may not receive (only letters, digits, space and ._:/=,+@%*- up to 1024 characters); fix the value.`,
      };
    }
    picked[name] = value;
  }
  return picked;
}

export function isProblem(value: unknown): value is IngressProblem {
  return (
    typeof value === 'object' &&
    value !== null &&
    'field' in value &&
    'message' in value &&
    typeof value.message === 'string'
  );
}
