/**
 * The canary annotations: an Ingress marked `canary` shares the host and path of the Ingress
 * that serves them (its primary) and takes the requests its header, cookie or weight pick.
 */
import { parseBoolean } from './annotation-values.ts';
import { type SupportedAnnotation, setting } from './option-types.ts';
import { parseCount, parseName, parseToken, parseWeight } from './traffic-values.ts';

export const canaryAnnotations: readonly SupportedAnnotation[] = [
  {
    nginx: 'canary',
    effect:
      'a canary of the Ingress serving the same host and path: it takes the requests its header, cookie or weight pick, the primary the rest',
    apply: setting(parseBoolean, (o, v) => (o.canary = v)),
  },
  {
    nginx: 'canary-weight',
    effect: 'the share of requests the canary takes (of canary-weight-total, 100 by default)',
    apply: setting(parseWeight(1_000_000), (o, v) => (o.canaryWeight = v)),
  },
  {
    nginx: 'canary-weight-total',
    effect: 'the total canary-weight is a share of',
    apply: setting(parseCount(1_000_000), (o, v) => (o.canaryWeightTotal = v)),
  },
  {
    nginx: 'canary-by-header',
    effect:
      'a request header: "always" picks the canary, "never" the primary, before the cookie and the weight',
    apply: setting(parseName, (o, v) => (o.canaryByHeader = v)),
  },
  {
    nginx: 'canary-by-header-value',
    effect: 'the canary-by-header value that picks the canary (instead of "always")',
    apply: setting(parseToken, (o, v) => (o.canaryByHeaderValue = v)),
  },
  {
    nginx: 'canary-by-cookie',
    effect: 'a cookie: "always" picks the canary, "never" the primary, before the weight',
    apply: setting(parseName, (o, v) => (o.canaryByCookie = v)),
  },
];
