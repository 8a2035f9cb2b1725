/**
 * The controller's view of the cluster: @kubernetes/client-node informers (list, then watch,
 * relist on expiry) for Ingresses, IngressClasses, Services, EndpointSlices, TLS Secrets (but
 * no CA's: watched-secrets.ts) and the HAProxyTemplateConfig. Every event calls `onChange`;
 * `snapshot()` reads the caches.
 * Lists go through counted API clients with haptic's User-Agent.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  NetworkingV1Api,
  type V1EndpointSlice,
  type V1Ingress,
  type V1IngressClass,
  type V1Secret,
  type V1Service,
  Watch,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { makeApiClient } from '../kube/api-client.ts';
import type { RequestCounter } from '../kube/request-counter.ts';
import type { ClusterSnapshot } from './cluster-snapshot.ts';
import { FqdnResolver } from './fqdn-resolver.ts';
import { fqdnNamesInUse } from './model-backends.ts';
import { type IngressView, ingressIsOurs } from '../validation/ingress-view.ts';
import { SnapshotViews } from './snapshot-views.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from './template-config.ts';
import { watchedSecretSelectors } from './watched-secrets.ts';

export type WatchedKind =
  'Ingress' | 'IngressClass' | 'Service' | 'EndpointSlice' | 'Secret' | 'HAProxyTemplateConfig';

export interface ClusterWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly counter: RequestCounter;
  readonly userAgent: string;
  /** Namespace and name of the HAProxyTemplateConfig. */
  readonly namespace: string;
  readonly templateConfigName: string;
  readonly ingressClass: string;
  /**
   * Serve endpoints of FQDN EndpointSlices (resolved here, checked by the model). false:
   * every FQDN endpoint is refused with an Event (`--fqdn-endpoints=false`).
   * @default true
   */
  readonly fqdnEndpoints?: boolean;
  readonly onChange: (kind: WatchedKind) => void;
  readonly logger: Logger;
}

const defaultClassAnnotation = 'ingressclass.kubernetes.io/is-default-class';

interface Selectors {
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

/** Lists with the selectors the watch uses too. */
type List<T extends KubernetesObject> = (selectors: Selectors) => Promise<KubernetesListObject<T>>;

export class ClusterWatch {
  readonly #options: ClusterWatchOptions;
  readonly #ingresses: ListWatch<V1Ingress>;
  readonly #classes: ListWatch<V1IngressClass>;
  readonly #services: ListWatch<V1Service>;
  readonly #slices: ListWatch<V1EndpointSlice>;
  readonly #secrets: ListWatch<V1Secret>;
  readonly #configs: ListWatch<KubernetesObject>;
  readonly #resolver: FqdnResolver | undefined;
  readonly #views = new SnapshotViews();
  #synced = false;
  #stopping = false;

  constructor(options: ClusterWatchOptions) {
    this.#options = options;
    this.#resolver =
      options.fqdnEndpoints === false
        ? undefined
        : new FqdnResolver({
            logger: options.logger,
            onChange: () => {
              if (this.#synced) options.onChange('EndpointSlice');
            },
          });
    const kc = options.kubeConfig;
    const client = { counter: options.counter, userAgent: options.userAgent };
    const core = makeApiClient(kc, CoreV1Api, client);
    const networking = makeApiClient(kc, NetworkingV1Api, client);
    const discovery = makeApiClient(kc, DiscoveryV1Api, client);
    const custom = makeApiClient(kc, CustomObjectsApi, client);
    const configSelectors = { fieldSelector: `metadata.name=${options.templateConfigName}` };
    this.#ingresses = this.#watch('Ingress', '/apis/networking.k8s.io/v1/ingresses', () =>
      networking.listIngressForAllNamespaces(),
    );
    this.#classes = this.#watch('IngressClass', '/apis/networking.k8s.io/v1/ingressclasses', () =>
      networking.listIngressClass(),
    );
    this.#services = this.#watch('Service', '/api/v1/services', () =>
      core.listServiceForAllNamespaces(),
    );
    this.#slices = this.#watch('EndpointSlice', '/apis/discovery.k8s.io/v1/endpointslices', () =>
      discovery.listEndpointSliceForAllNamespaces(),
    );
    this.#secrets = this.#watch(
      'Secret',
      '/api/v1/secrets',
      (selectors) => core.listSecretForAllNamespaces(selectors),
      watchedSecretSelectors,
    );
    this.#configs = this.#watch(
      'HAProxyTemplateConfig',
      `/apis/${templateConfigGroup}/${templateConfigVersion}/namespaces/${options.namespace}/${templateConfigPlural}`,
      async (selectors) =>
        (await custom.listNamespacedCustomObject({
          group: templateConfigGroup,
          version: templateConfigVersion,
          namespace: options.namespace,
          plural: templateConfigPlural,
          ...selectors,
        })) as KubernetesListObject<KubernetesObject>,
      configSelectors,
    );
  }

  #watch<T extends KubernetesObject>(
    kind: WatchedKind,
    path: string,
    list: List<T>,
    selectors: Selectors = {},
  ): ListWatch<T> {
    const informer = new ListWatch<T>(
      path,
      new Watch(this.#options.kubeConfig),
      () => list(selectors),
      false,
      selectors.labelSelector,
      selectors.fieldSelector,
    );
    const changed = (): void => {
      if (this.#synced) this.#options.onChange(kind);
    };
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('error', (error: unknown) => {
      if (this.#stopping) return;
      this.#options.logger.warn({ kind, err: String(error) }, 'watch failed; relisting in 2 s');
      // The informer does not restart itself after an error.
      setTimeout(() => {
        if (!this.#stopping) {
          informer.start().catch(() => undefined);
        }
      }, 2_000).unref();
    });
    return informer;
  }

  /** Lists everything once and starts watching; resolves when every cache is filled. */
  async start(): Promise<void> {
    await Promise.all(
      [
        this.#ingresses,
        this.#classes,
        this.#services,
        this.#slices,
        this.#secrets,
        this.#configs,
      ].map((informer) => informer.start()),
    );
    this.#synced = true;
  }

  get synced(): boolean {
    return this.#synced;
  }

  async stop(): Promise<void> {
    this.#synced = false;
    this.#stopping = true;
    this.#resolver?.stop();
    await Promise.all(
      [
        this.#ingresses,
        this.#classes,
        this.#services,
        this.#slices,
        this.#secrets,
        this.#configs,
      ].map((informer) => informer.stop()),
    );
  }

  /** The HAProxyTemplateConfig object, or undefined while it does not exist. */
  templateConfig(): KubernetesObject | undefined {
    return this.#configs.get(this.#options.templateConfigName, this.#options.namespace);
  }

  /** Whether our IngressClass is the cluster's default class. */
  ourClassIsDefault(): boolean {
    const ours = this.#classes.get(this.#options.ingressClass);
    return ours?.metadata?.annotations?.[defaultClassAnnotation] === 'true';
  }

  /** The watched state, reduced to what rendering needs (views kept per object: snapshot-views.ts). */
  snapshot(): ClusterSnapshot {
    const isDefault = this.ourClassIsDefault();
    const ingresses: IngressView[] = [];
    for (const ingress of this.#ingresses.list()) {
      const view = this.#views.ingress(ingress);
      if (typeof view !== 'string' && ingressIsOurs(view, this.#options.ingressClass, isDefault)) {
        ingresses.push(view);
      }
    }
    const endpointSlices = this.#views.endpointSlices(this.#slices.list());
    const fqdnNames =
      this.#resolver === undefined
        ? 'disabled'
        : this.#views.resolutions(
            this.#resolver.resolutions(fqdnNamesInUse(ingresses, endpointSlices)),
          );
    return {
      ingresses,
      services: this.#views.services(this.#services.list()),
      endpointSlices,
      secrets: this.#views.secrets(this.#secrets.list()),
      fqdnNames,
    };
  }
}
