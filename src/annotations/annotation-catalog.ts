/**
 * The Ingress annotations this controller reads, by name: ingress-nginx's under its prefix and,
 * where HAProxy's own controller has one, under `haproxy.org/` (route-annotations.ts,
 * traffic-annotations.ts). Also the annotations it refuses: snippets (free text into the
 * proxy's configuration, never rendered) and those whose absence would open what the Ingress
 * closes (authentication not served yet): their routes are left out rather than served
 * without it.
 */
import { type SupportedAnnotation, haproxyPrefix, nginxPrefix } from './option-types.ts';
import { routeAnnotations } from './route-annotations.ts';
import { trafficAnnotations } from './traffic-annotations.ts';
import { canaryAnnotations } from './canary-annotations.ts';

export {
  type IngressOptions,
  defaultIngressOptions,
  haproxyPrefix,
  nginxPrefix,
} from './option-types.ts';
export type { SupportedAnnotation } from './option-types.ts';

export const supportedAnnotations: readonly SupportedAnnotation[] = [
  ...routeAnnotations,
  ...trafficAnnotations,
  ...canaryAnnotations,
];

/** Why an annotation is refused: the sentence's end after "is refused: ". */
export interface RefusedAnnotation {
  readonly name: string;
  readonly why: string;
}

const snippet =
  "it is free text for the proxy's configuration, which this controller never renders (one tenant's snippet would run in every tenant's HAProxy); use the supported annotations or a template of the HAProxyTemplateConfig";
const notYet =
  'authentication is not served by this controller yet, and serving the routes without it would open what the Ingress closes; keep this Ingress on ingress-nginx, or put the authentication in the application';

const passthrough =
  'TLS passthrough is not served by this controller yet, and terminating TLS here would send plain HTTP to a backend that expects TLS; keep this Ingress on ingress-nginx';
const verify =
  "verifying the backend's certificate is not served by this controller yet, and serving without the check would be weaker than the Ingress asks; remove it to accept the backend's certificate unverified (ingress-nginx's default)";

/** Annotations whose routes are left out: exact names, and name prefixes ending in `-`. */
export const refusedAnnotations: readonly RefusedAnnotation[] = [
  { name: `${nginxPrefix}configuration-snippet`, why: snippet },
  { name: `${nginxPrefix}server-snippet`, why: snippet },
  { name: `${nginxPrefix}auth-snippet`, why: snippet },
  { name: `${nginxPrefix}stream-snippet`, why: snippet },
  { name: `${nginxPrefix}modsecurity-snippet`, why: snippet },
  { name: `${haproxyPrefix}backend-config-snippet`, why: snippet },
  { name: `${haproxyPrefix}frontend-config-snippet`, why: snippet },
  { name: `${haproxyPrefix}global-config-snippet`, why: snippet },
  { name: `${nginxPrefix}auth-`, why: notYet },
  { name: `${nginxPrefix}ssl-passthrough`, why: passthrough },
  { name: `${haproxyPrefix}ssl-passthrough`, why: passthrough },
  { name: `${nginxPrefix}proxy-ssl-verify`, why: verify },
  { name: `${nginxPrefix}proxy-ssl-secret`, why: verify },
  { name: `${haproxyPrefix}auth-`, why: notYet },
];

/** The refusal of annotation `name`, if it is refused. */
export function refusalOf(name: string): RefusedAnnotation | undefined {
  return refusedAnnotations.find((refused) =>
    refused.name.endsWith('-') ? name.startsWith(refused.name) : name === refused.name,
  );
}

/** Every supported annotation by its full name. */
export const annotationsByName: ReadonlyMap<string, SupportedAnnotation> = new Map(
  supportedAnnotations.flatMap((annotation) => [
    ...(annotation.nginx === undefined
      ? []
      : [[`${nginxPrefix}${annotation.nginx}`, annotation] as const]),
    ...(annotation.haproxy ?? []).map((name) => [`${haproxyPrefix}${name}`, annotation] as const),
  ]),
);
