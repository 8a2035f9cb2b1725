/**
 * The controller's view of the cluster: @kubernetes/client-node informers (list, then watch,
 * relist on expiry) for Ingresses, IngressClasses, Services, EndpointSlices, TLS Secrets (but
 * no CA's: watched-secrets.ts) and the HAProxyTemplateConfig, and for the endpoint rules
 * (endpoint-rules.ts) the release's own Pods and, unless the Pod CIDRs are given, the Nodes.
 * Every event calls `onChange`, except those of Pods and Nodes that leave the endpoint rules
 * as they were; `snapshot()` reads the caches.
 * Lists go through counted API clients with haptic's User-Agent.
 */
import {
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  type V1EndpointSlice,
  type V1Ingress,
  type V1IngressClass,
  type V1Node,
  type V1Pod,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClients } from '../../kube/kube-clients.ts';
import type { ClusterSnapshot } from '../routing/cluster-snapshot.ts';
import {
  type EndpointRanges,
  KeptEndpointRules,
  endpointRulesOf,
} from '../routing/endpoint-rules.ts';
import { FqdnResolver } from './fqdn-resolver.ts';
import { fqdnNamesInUse } from '../routing/model-backends.ts';
import { type IngressView, ingressIsOurs } from '../../validation/ingress-view.ts';
import { SnapshotViews } from '../routing/snapshot-views.ts';
import {
  templateConfigGroup,
  templateConfigPlural,
  templateConfigVersion,
} from '../../api/template-config.ts';
import { watchedSecretSelectors } from './watched-secrets.ts';

export type WatchedKind =
  | 'Ingress'
  | 'IngressClass'
  | 'Service'
  | 'EndpointSlice'
  | 'Secret'
  | 'HAProxyTemplateConfig'
  /** The release's own Pods or the Nodes' Pod CIDRs changed the endpoint rules. */
  | 'EndpointRules';

export interface ClusterWatchOptions {
  readonly clients: Pick<KubeClients, 'core' | 'networking' | 'discovery' | 'custom' | 'watch'>;
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
  /**
   * The release's own Pods (HAProxy and the controller), whose addresses no backend may use:
   * a namespace and a label selector. Absent: none are watched.
   */
  readonly ownPods?: { readonly namespace: string; readonly labelSelector: string };
  /**
   * The ranges endpoints may use. Without `podCIDRs` the Nodes are watched for theirs.
   * @default {} (the Nodes' Pod CIDRs only)
   */
  readonly endpointRanges?: EndpointRanges;
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
  readonly #ownPods: ListWatch<V1Pod> | undefined;
  readonly #nodes: ListWatch<V1Node> | undefined;
  readonly #rules: KeptEndpointRules;
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
    const { core, networking, discovery, custom } = options.clients;
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
    const ranges = options.endpointRanges ?? {};
    this.#rules = new KeptEndpointRules(endpointRulesOf([], [], ranges));
    const own = options.ownPods;
    this.#ownPods =
      own === undefined
        ? undefined
        : this.#watchRules(
            `/api/v1/namespaces/${own.namespace}/pods`,
            (selectors) => core.listNamespacedPod({ namespace: own.namespace, ...selectors }),
            { labelSelector: own.labelSelector },
          );
    this.#nodes =
      ranges.podCIDRs === undefined
        ? this.#watchRules('/api/v1/nodes', () => core.listNode())
        : undefined;
  }

  /** The informers that read one kind of object, in the order they start. */
  #informers(): ListWatch<KubernetesObject>[] {
    return [
      this.#ingresses,
      this.#classes,
      this.#services,
      this.#slices,
      this.#secrets,
      this.#configs,
      ...(this.#ownPods === undefined ? [] : [this.#ownPods]),
      ...(this.#nodes === undefined ? [] : [this.#nodes]),
    ];
  }

  /** The endpoint rules from the Pod and Node caches now; true when they changed. */
  #updateRules(): boolean {
    const changed = this.#rules.update(
      endpointRulesOf(
        this.#ownPods?.list() ?? [],
        this.#nodes?.list() ?? [],
        this.#options.endpointRanges ?? {},
      ),
    );
    // Said at the first sync, and again whenever a change leaves none.
    if ((changed || !this.#synced) && this.#rules.current.podCIDRs.length === 0) {
      this.#options.logger.warn(
        "no Node has spec.podCIDRs and --pod-cidrs names none: endpoints outside the Pod network are not refused (only the release's own Pods and loopback, link-local and other fixed ranges are); set controller.endpoints.podCIDRs to the cluster's Pod ranges",
      );
    }
    return changed;
  }

  /**
   * An informer whose objects feed the endpoint rules: an event that changes them (an own
   * Pod's address, a Node's Pod CIDR) is an `EndpointRules` change; others (status updates,
   * Node heartbeats) are none. The rules are read once the informer's handling of the event is
   * over: a relist calls back for deleted objects before its cache drops them.
   */
  #watchRules<T extends KubernetesObject>(
    path: string,
    list: List<T>,
    selectors: Selectors = {},
  ): ListWatch<T> {
    return this.#watch('EndpointRules', path, list, selectors, () => {
      queueMicrotask(() => {
        if (this.#synced && this.#updateRules()) this.#options.onChange('EndpointRules');
      });
    });
  }

  #watch<T extends KubernetesObject>(
    kind: WatchedKind,
    path: string,
    list: List<T>,
    selectors: Selectors = {},
    onEvent: () => void = () => {
      this.#options.onChange(kind);
    },
  ): ListWatch<T> {
    const informer = new ListWatch<T>(
      path,
      this.#options.clients.watch,
      () => list(selectors),
      false,
      selectors.labelSelector,
      selectors.fieldSelector,
    );
    const changed = (): void => {
      // Before the first sync start() reads the caches once, and no one is told.
      if (this.#synced) onEvent();
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
    await Promise.all(this.#informers().map((informer) => informer.start()));
    this.#updateRules();
    this.#synced = true;
  }

  get synced(): boolean {
    return this.#synced;
  }

  async stop(): Promise<void> {
    this.#synced = false;
    this.#stopping = true;
    this.#resolver?.stop();
    await Promise.all(this.#informers().map((informer) => informer.stop()));
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
    const services = this.#views.services(this.#services.list());
    const fqdnNames =
      this.#resolver === undefined
        ? 'disabled'
        : this.#views.resolutions(
            this.#resolver.resolutions(fqdnNamesInUse(ingresses, endpointSlices, services)),
          );
    return {
      ingresses,
      services,
      endpointSlices,
      secrets: this.#views.secrets(this.#secrets.list()),
      fqdnNames,
      endpointRules: this.#rules.current,
    };
  }
}
