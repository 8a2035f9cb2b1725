/**
 * Views of watched objects, kept per object: the informers replace an object on every change
 * and keep it otherwise, so a view made from an object is made once and every snapshot built
 * while the object stands shares it. A Service's list of EndpointSlice views is shared too
 * while its slices stand, and FQDN resolutions while no answer changed — the identities
 * KeptBackends compares, so a backend is built again only when its own objects changed.
 * The maps of Services, slice lists and Secrets are the previous ones while all their
 * entries stand, so a routing model built from a snapshot with only Ingresses changed
 * reuses the last build's backends as a whole (routing-model.ts, KeptModel).
 */
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from '@kubernetes/client-node';
import type {
  ClusterSnapshot,
  EndpointSliceView,
  NameResolution,
  SecretView,
  ServiceView,
} from './cluster-snapshot.ts';
import { objectKey } from './cluster-snapshot.ts';
import { type IngressView, readIngress } from '../../validation/ingress-view.ts';

function cached<K extends object, V>(cache: WeakMap<K, V>, key: K, make: (key: K) => V): V {
  const kept = cache.get(key);
  if (kept !== undefined) return kept;
  const made = make(key);
  cache.set(key, made);
  return made;
}

function sliceView(slice: V1EndpointSlice): EndpointSliceView {
  return {
    namespace: slice.metadata?.namespace ?? '',
    name: slice.metadata?.name ?? '',
    serviceName: slice.metadata?.labels?.['kubernetes.io/service-name'] ?? '',
    addressType: slice.addressType,
    ports: (slice.ports ?? []).flatMap((p) =>
      p.port === undefined ? [] : [{ name: p.name ?? '', port: p.port }],
    ),
    endpoints: (slice.endpoints ?? []).map((endpoint) => ({
      addresses: endpoint.addresses,
      ready: endpoint.conditions?.ready !== false,
    })),
  };
}

function serviceView(service: V1Service): ServiceView {
  return {
    namespace: service.metadata?.namespace ?? '',
    name: service.metadata?.name ?? '',
    ports: (service.spec?.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
    ...(service.spec?.type === 'ExternalName' && service.spec.externalName !== undefined
      ? { externalName: service.spec.externalName }
      : {}),
  };
}

function secretView(secret: V1Secret): SecretView {
  return {
    namespace: secret.metadata?.namespace ?? '',
    name: secret.metadata?.name ?? '',
    data: secret.data ?? {},
  };
}

function sameItems<T>(a: readonly T[] | undefined, b: readonly T[]): boolean {
  return a !== undefined && a.length === b.length && a.every((item, i) => item === b[i]);
}

/** `made`, or `kept` when it maps the very same keys to the very same values. */
function sameMap<K, V>(kept: ReadonlyMap<K, V> | undefined, made: Map<K, V>): ReadonlyMap<K, V> {
  if (kept === undefined || kept.size !== made.size) return made;
  for (const [key, value] of made) if (kept.get(key) !== value) return made;
  return kept;
}

export class SnapshotViews {
  readonly #ingresses = new WeakMap<V1Ingress, IngressView | string>();
  readonly #serviceViews = new WeakMap<V1Service, ServiceView>();
  readonly #slices = new WeakMap<V1EndpointSlice, EndpointSliceView>();
  readonly #secrets = new WeakMap<V1Secret, SecretView>();
  #sliceLists: ReadonlyMap<string, readonly EndpointSliceView[]> = new Map();
  #services: ClusterSnapshot['services'] | undefined;
  #secretViews: ClusterSnapshot['secrets'] | undefined;
  #resolutions: ReadonlyMap<string, NameResolution> | undefined;

  /** The Ingress's view, or why it cannot be read (readIngress). */
  ingress(ingress: V1Ingress): IngressView | string {
    return cached(this.#ingresses, ingress, readIngress);
  }

  /** Service views by `namespace/name`; the previous map while every view stands. */
  services(services: readonly V1Service[]): ClusterSnapshot['services'] {
    this.#services = sameMap(
      this.#services,
      new Map(
        services.map((service) => {
          const view = cached(this.#serviceViews, service, serviceView);
          return [objectKey(view.namespace, view.name), view] as const;
        }),
      ),
    );
    return this.#services;
  }

  /**
   * EndpointSlice views by `namespace/service`; a Service's list is shared while it stands,
   * and the previous map while every list does.
   */
  endpointSlices(
    slices: readonly V1EndpointSlice[],
  ): ReadonlyMap<string, readonly EndpointSliceView[]> {
    const lists = new Map<string, EndpointSliceView[]>();
    for (const slice of slices) {
      if (slice.metadata?.labels?.['kubernetes.io/service-name'] === undefined) continue;
      const view = cached(this.#slices, slice, sliceView);
      const key = objectKey(view.namespace, view.serviceName);
      const list = lists.get(key);
      if (list === undefined) lists.set(key, [view]);
      else list.push(view);
    }
    const shared = new Map<string, readonly EndpointSliceView[]>();
    for (const [key, views] of lists) {
      const kept = this.#sliceLists.get(key);
      shared.set(key, kept !== undefined && sameItems(kept, views) ? kept : views);
    }
    this.#sliceLists = sameMap(this.#sliceLists, shared);
    return this.#sliceLists;
  }

  /** Secret views by `namespace/name`; the previous map while every view stands. */
  secrets(secrets: readonly V1Secret[]): ClusterSnapshot['secrets'] {
    this.#secretViews = sameMap(
      this.#secretViews,
      new Map(
        secrets.map((secret) => {
          const view = cached(this.#secrets, secret, secretView);
          return [objectKey(view.namespace, view.name), view] as const;
        }),
      ),
    );
    return this.#secretViews;
  }

  /** `resolutions`, or the previous map when it holds the very same answers. */
  resolutions(
    resolutions: ReadonlyMap<string, NameResolution>,
  ): ReadonlyMap<string, NameResolution> {
    const kept = this.#resolutions;
    if (
      kept !== undefined &&
      kept.size === resolutions.size &&
      [...resolutions].every(([name, answer]) => kept.get(name) === answer)
    ) {
      return kept;
    }
    this.#resolutions = resolutions;
    return resolutions;
  }
}
