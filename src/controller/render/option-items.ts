/**
 * The parts of the template context the annotations add: a backend's options and the
 * canaries, in Liquid's snake_case (docs/annotations.md lists the fields).
 */
import { canaryTag } from '../routing/model-canaries.ts';
import type { ModelBackend, RoutingModel } from '../routing/model-types.ts';

/** A backend's options as templates read them (annotations.md lists the fields). */
export function optionsItem(options: ModelBackend['options']): Readonly<Record<string, unknown>> {
  return {
    ssl_redirect_code: options.sslRedirectCode,
    hsts: options.hsts,
    redirect: options.redirect === null ? null : { ...options.redirect },
    app_root: options.appRoot,
    rewrite: options.rewrite === null ? null : { ...options.rewrite },
    connect_timeout: options.connectTimeout,
    server_timeout: options.serverTimeout,
    max_body_bytes: options.maxBodyBytes,
    allow_ranges: options.allowRanges === null ? null : [...options.allowRanges],
    deny_ranges: options.denyRanges === null ? null : [...options.denyRanges],
    protocol: options.protocol,
    upstream_host: options.upstreamHost,
    cors:
      options.cors === null
        ? null
        : {
            any_origin: options.cors.origins.includes('*'),
            origins: [...options.cors.origins],
            methods: options.cors.methods,
            headers: options.cors.headers,
            expose_headers: options.cors.exposeHeaders,
            credentials: options.cors.credentials,
            max_age: options.cors.maxAge,
          },
    affinity:
      options.affinity === null
        ? null
        : {
            cookie: options.affinity.cookie,
            max_age: options.affinity.maxAge,
            path: options.affinity.path,
            same_site: options.affinity.sameSite,
          },
    balance: options.balance,
    limit_rps: options.limitRps,
    limit_connections: options.limitConnections,
  };
}

/** A canary as templates read it: its primary route's map value (tag) and both backends. */
export function canaryItems(model: RoutingModel): readonly Readonly<Record<string, unknown>>[] {
  return model.canaries.map(({ primary, route, spec }, index) => ({
    tag: canaryTag(index),
    primary: primary.backend,
    primary_ingress: primary.ingress,
    backend: route.backend,
    ingress: route.ingress,
    weight: spec.weight,
    weight_total: spec.weightTotal,
    header: spec.header,
    header_value: spec.headerValue,
    cookie: spec.cookie,
  }));
}
