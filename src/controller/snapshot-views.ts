/**
 * Views of watched objects, kept per object: the informers replace an object on every change
 * and keep it otherwise, so a view made from an object is made once and every snapshot built
 * while the object stands shares it. A Service's list of EndpointSlice views is shared too
 * while its slices stand, and FQDN resolutions while no answer changed — the identities
 * KeptBackends compares, so a backend is built again only when its own objects changed.
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
import { type IngressView, readIngress } from '../validation/ingress-view.ts';

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
    ports: (service.spec?.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port })),
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

export class SnapshotViews {
  readonly #ingresses = new WeakMap<V1Ingress, IngressView | string>();
  readonly #services = new WeakMap<V1Service, ServiceView>();
  readonly #slices = new WeakMap<V1EndpointSlice, EndpointSliceView>();
  readonly #secrets = new WeakMap<V1Secret, SecretView>();
  #sliceLists = new Map<string, readonly EndpointSliceView[]>();
  #resolutions: ReadonlyMap<string, NameResolution> | undefined;

  /** The Ingress's view, or why it cannot be read (readIngress). */
  ingress(ingress: V1Ingress): IngressView | string {
    return cached(this.#ingresses, ingress, readIngress);
  }

  services(services: readonly V1Service[]): ClusterSnapshot['services'] {
    return new Map(
      services.map((service) => {
        const view = cached(this.#services, service, serviceView);
        return [objectKey(view.namespace, view.name), view] as const;
      }),
    );
  }

  /** EndpointSlice views by `namespace/service`; a Service's list is shared while it stands. */
  endpointSlices(slices: readonly V1EndpointSlice[]): Map<string, readonly EndpointSliceView[]> {
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
    this.#sliceLists = shared;
    return shared;
  }

  secrets(secrets: readonly V1Secret[]): ClusterSnapshot['secrets'] {
    return new Map(
      secrets.map((secret) => {
        const view = cached(this.#secrets, secret, secretView);
        return [objectKey(view.namespace, view.name), view] as const;
      }),
    );
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
