/**
 * The routing model's types: what a cluster snapshot becomes (routing-model.ts builds it,
 * the builders beside it fill its parts) and what templates see as their context. Types only,
 * so every builder imports them without importing another builder.
 */
import type { ModelWarning } from './ingress-event-reasons.ts';
import type { BackendOptions, CanarySpec } from '../../annotations/route-options.ts';
import type { BackendProtocol } from '../../annotations/annotation-values.ts';
import type { PathType } from '../../validation/ingress-checks.ts';

export interface ModelSlot {
  /** `s1`, `s2`, …: the `server` name, the same for the slot whatever it holds. */
  readonly name: string;
  /** The endpoint (`address:port`, IPv6 in brackets), or `spareEndpoint`. */
  readonly endpoint: string;
  /** True for an empty slot (rendered `disabled`). */
  readonly spare: boolean;
}

export interface ModelRoute {
  /** Host as written; `*` for rules without a host. */
  readonly host: string;
  readonly pathType: PathType;
  /** For Regex, the regular expression as written. */
  readonly path: string;
  /** Map keys: the path itself (without a trailing slash) and, for Prefix, the subtree. */
  readonly exactKey: string;
  readonly prefixKey: string;
  readonly backend: string;
  readonly ingress: string;
  /**
   * A canary Ingress's route: in no map; served beside the route of the same host, path type
   * and path (RoutingModel.canaries).
   */
  readonly canary: boolean;
}

/** A canary route beside the route it takes requests from. */
export interface ModelCanary {
  /** The primary route, which the maps hold. */
  readonly primary: ModelRoute;
  /** The canary's own route (its backend serves what it takes). */
  readonly route: ModelRoute;
  readonly spec: CanarySpec;
}

export interface ModelServer {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** `address:port`, IPv6 in brackets. */
  readonly endpoint: string;
}

/** One line of a map file: a key (host and path) and a backend name. */
export interface MapEntry {
  readonly key: string;
  readonly backend: string;
}

export interface ModelBackend {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly servicePort: string;
  readonly servers: readonly ModelServer[];
  /** The servers placed in a fixed number of slots, the rest spare (server-slots.ts). */
  readonly slots: readonly ModelSlot[];
  /** What the routes using it ask (annotations, TLS host); part of its name unless plain. */
  readonly options: BackendOptions;
  /** How HAProxy talks to the servers: backend-protocol, else the port's appProtocol, else HTTP. */
  readonly protocol: BackendProtocol;
}

/**
 * One crt-list line's worth of a certificate: a certificate with more hosts than one line of
 * HAProxy's holds comes as several entries naming the same file (model-certificates.ts).
 */
export interface ModelCertificate {
  /** Path of the PEM file under the base directory. */
  readonly file: string;
  readonly secret: string;
  /** SNI names (never empty: an entry without hosts serves the Ingress's rule hosts). */
  readonly hosts: readonly string[];
}

export interface ModelIngress {
  readonly namespace: string;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ExcludedIngress {
  readonly namespace: string;
  readonly name: string;
  readonly field: string;
  readonly message: string;
}

export interface RoutingModel {
  readonly routes: readonly ModelRoute[];
  /**
   * Exact-match keys: Exact paths, and Prefix paths themselves (`/foo` for Prefix `/foo`),
   * Exact winning when both claim a key. Sorted by key.
   */
  readonly exactMap: readonly MapEntry[];
  /** Prefix subtrees (`host/foo/`), longest first, for HAProxy's first-match `map_beg`. */
  readonly prefixMap: readonly MapEntry[];
  /**
   * Regex paths as PCRE2 keys of host and path (`(?i)^a\\.example\\.com(?=/)(?:/app(/|$)(.*))`),
   * longest first, for HAProxy's first-match `map_reg`.
   */
  readonly regexMap: readonly MapEntry[];
  /** The canaries that found their primary, in the order of their routes. */
  readonly canaries: readonly ModelCanary[];
  readonly backends: readonly ModelBackend[];
  readonly certificates: readonly ModelCertificate[];
  /** `ssl/default.pem`, or null without a usable default certificate. */
  readonly defaultCertificate: string | null;
  readonly ingresses: readonly ModelIngress[];
}

export interface ModelResult {
  readonly model: RoutingModel;
  /** Files the model refers to (certificates), path → content. */
  readonly files: ReadonlyMap<string, string>;
  readonly excluded: readonly ExcludedIngress[];
  /**
   * Parts of served Ingresses left out (conflicts, TLS Secrets, refused endpoints), one
   * sentence each; `ingressEvents` turns them into one Event per Ingress.
   */
  readonly warnings: readonly ModelWarning[];
}
