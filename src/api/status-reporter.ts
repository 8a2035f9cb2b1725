/**
 * What the controller tells operators through the API: the Ready condition of the
 * HAProxyTemplateConfig (status subresource) and Events on it and on Ingresses not served as
 * written. Writes only when something changed, so a steady state costs the API server nothing.
 * Every Event names its object with uid and resourceVersion: `kubectl describe` finds an
 * object's Events by uid.
 */
import type {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObject,
  NetworkingV1Api,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import type { Problem } from '../problem.ts';
import { apiStatus } from '../kube/api-errors.ts';
import type { KubeClients } from '../kube/kube-clients.ts';
import {
  type ConditionStamp,
  type ReadyCondition,
  clipMessage,
  kubeTime,
  readyConditionBody,
  readyStampOf,
} from './ready-condition.ts';
import { patchTemplateConfigStatus } from './status-patch.ts';
import {
  templateConfigGroup,
  templateConfigKind,
  templateConfigVersion,
} from './template-config.ts';

export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
}

export interface StatusReporterOptions {
  readonly clients: Pick<KubeClients, 'core' | 'custom' | 'networking'>;
  /** Pod name, for the Events' reporting instance. */
  readonly instance: string;
  readonly logger: Logger;
}

export class StatusReporter {
  readonly #options: StatusReporterOptions;
  readonly #core: CoreV1Api;
  readonly #custom: CustomObjectsApi;
  readonly #networking: NetworkingV1Api;
  readonly #lastCondition = new Map<string, string>();
  readonly #lastStamp = new Map<string, ConditionStamp>();
  readonly #lastEvent = new Map<string, string>();

  constructor(options: StatusReporterOptions) {
    this.#options = options;
    this.#core = options.clients.core;
    this.#custom = options.clients.custom;
    this.#networking = options.clients.networking;
  }

  /**
   * Sets the Ready condition of a HAProxyTemplateConfig (only when it changed), and its
   * lastDelivery when every agent runs a configuration. The transition time is the one this
   * reporter last wrote or, after a restart, the one `config` carries.
   */
  async setCondition(config: KubernetesObject, condition: ReadyCondition): Promise<void> {
    const namespace = config.metadata?.namespace ?? '';
    const name = config.metadata?.name ?? '';
    const key = `${namespace}/${name}`;
    const fingerprint = JSON.stringify(condition);
    if (this.#lastCondition.get(key) === fingerprint) return;
    const now = new Date();
    const previous =
      this.#lastStamp.get(key) ?? readyStampOf((config as { status?: unknown }).status);
    const ready = readyConditionBody(condition, previous, now);
    const status = {
      observedGeneration: condition.observedGeneration,
      conditions: [ready],
      ...(condition.delivered === undefined
        ? {}
        : { lastDelivery: { digest: condition.delivered.digest, time: kubeTime(now) } }),
    };
    try {
      // A merge patch of these keys only: the replicas' TLS entries (status.tls) stay.
      await patchTemplateConfigStatus(this.#custom, namespace, name, status);
      this.#lastCondition.set(key, fingerprint);
      this.#lastStamp.set(key, ready);
    } catch (error) {
      this.#options.logger.warn(
        { config: key, err: describeError(error) },
        'could not set the status condition',
      );
    }
  }

  /** Records an Event on `object`, unless the same reason and message were just recorded. */
  async event(object: ObjectRef, type: 'Normal' | 'Warning', problem: Problem): Promise<void> {
    await this.#record(object, object.uid, type, problem, () => Promise.resolve(object));
  }

  /**
   * Records an Event on the Ingress `namespace/name` whose uid the informer saw, unless the
   * same reason and message were just recorded for it. The Ingress is read first (one GET per
   * new Event) for its resourceVersion; no Event is recorded once it is gone or replaced.
   */
  async ingressEvent(
    ingress: { readonly namespace: string; readonly name: string; readonly uid: string },
    type: 'Normal' | 'Warning',
    problem: Problem,
  ): Promise<void> {
    const base = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', ...ingress };
    await this.#record(base, ingress.uid, type, problem, async () => {
      try {
        const current = await this.#networking.readNamespacedIngress({
          namespace: ingress.namespace,
          name: ingress.name,
        });
        if (current.metadata?.uid !== ingress.uid) return undefined;
        return { ...base, resourceVersion: current.metadata.resourceVersion ?? '' };
      } catch (error) {
        if (apiStatus(error) === 404) return undefined;
        throw error;
      }
    });
  }

  async #record(
    object: Omit<ObjectRef, 'uid' | 'resourceVersion'>,
    uid: string,
    type: 'Normal' | 'Warning',
    { reason, message }: Problem,
    complete: () => Promise<ObjectRef | undefined>,
  ): Promise<void> {
    const key = `${object.kind} ${object.namespace}/${object.name}`;
    const fingerprint = `${uid} ${type} ${reason} ${message}`;
    if (this.#lastEvent.get(key) === fingerprint) return;
    this.#lastEvent.set(key, fingerprint);
    const now = new Date();
    try {
      const ref = await complete();
      if (ref === undefined) {
        this.#lastEvent.delete(key);
        return;
      }
      await this.#core.createNamespacedEvent({
        namespace: ref.namespace,
        body: {
          metadata: {
            generateName: `${ref.name.slice(0, 200)}.`,
            namespace: ref.namespace,
          },
          involvedObject: {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            namespace: ref.namespace,
            name: ref.name,
            uid: ref.uid,
            resourceVersion: ref.resourceVersion,
          },
          type,
          reason,
          message: clipMessage(message),
          source: { component: 'haptic-controller', host: this.#options.instance },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (error) {
      this.#lastEvent.delete(key);
      this.#options.logger.warn(
        { object: key, err: describeError(error) },
        'could not record an Event',
      );
    }
  }

  /** Forgets what was recorded about an object, so the next problem is reported again. */
  forget(kind: string, namespace: string, name: string): void {
    this.#lastEvent.delete(`${kind} ${namespace}/${name}`);
  }

  /** Whether an Event about this object is currently remembered. */
  remembers(kind: string, namespace: string, name: string): boolean {
    return this.#lastEvent.has(`${kind} ${namespace}/${name}`);
  }
}

export function templateConfigRef(config: KubernetesObject): ObjectRef {
  return {
    apiVersion: `${templateConfigGroup}/${templateConfigVersion}`,
    kind: templateConfigKind,
    namespace: config.metadata?.namespace ?? '',
    name: config.metadata?.name ?? '',
    uid: config.metadata?.uid ?? '',
    resourceVersion: config.metadata?.resourceVersion ?? '',
  };
}
