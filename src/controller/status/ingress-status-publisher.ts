/**
 * Writes `status.loadBalancer.ingress` of Ingresses (leader only): the published address on
 * every Ingress in the configuration the agents run, nothing of ours on any other. A new
 * leader lists the Ingresses once to learn what they carry; after that it writes only what
 * changed, so a steady state costs one read of the Service per reconcile and no write.
 */
import type { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { apiStatus, describeApiError } from '../../kube/api-errors.ts';
import type { KubeClients } from '../../kube/kube-clients.ts';
import { objectKey } from '../routing/cluster-snapshot.ts';
import {
  type LoadBalancerAddress,
  knownStatuses,
  serviceAddresses,
  statusWrites,
} from './ingress-status.ts';

/** Where the published address comes from (`--publish-service`, `--publish-status-address`). */
export type StatusAddressSource =
  | { readonly service: { readonly namespace: string; readonly name: string } }
  | { readonly addresses: readonly LoadBalancerAddress[] };

export interface IngressStatusPublisherOptions {
  readonly clients: Pick<KubeClients, 'core' | 'networking'>;
  readonly source: StatusAddressSource;
  /** Field manager of the writes: the replica's identity, so managedFields name the writer. */
  readonly fieldManager: string;
  readonly logger: Logger;
}

function split(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export class IngressStatusPublisher {
  readonly #options: IngressStatusPublisherOptions;
  readonly #core: CoreV1Api;
  readonly #networking: NetworkingV1Api;
  /** What Ingresses carry, as far as this leader knows; undefined until its first list. */
  #known: Map<string, LoadBalancerAddress[]> | undefined;
  #lastProblem: string | undefined;

  constructor(options: IngressStatusPublisherOptions) {
    this.#options = options;
    this.#core = options.clients.core;
    this.#networking = options.clients.networking;
  }

  /** Publishes the address on the `served` Ingresses and clears ours from the rest. */
  async publish(
    served: readonly { readonly namespace: string; readonly name: string }[],
  ): Promise<void> {
    const address = await this.#address();
    if (address === undefined) return;
    const keys = new Set(served.map((ingress) => objectKey(ingress.namespace, ingress.name)));
    this.#known ??= await this.#list(keys, address);
    const known = this.#known;
    if (known === undefined) return;
    const writes = statusWrites(known, keys, address);
    for (const key of writes.set) {
      const value = { ingress: address };
      const result = await this.#write(key, [{ op: 'add', path: '/status/loadBalancer', value }]);
      if (result === 'done') known.set(key, [...address]);
      if (result === 'gone') known.delete(key);
    }
    for (const key of writes.clear) {
      // Only while it still carries what we wrote: another controller may have taken it over
      // (then the test fails with 422 and the Ingress is no longer ours to clear).
      const carried = known.get(key) ?? [];
      const result = await this.#write(key, [
        { op: 'test', path: '/status/loadBalancer/ingress', value: carried },
        { op: 'remove', path: '/status/loadBalancer/ingress' },
      ]);
      if (result !== 'failed') known.delete(key);
    }
    if (writes.set.length + writes.clear.length > 0) {
      this.#options.logger.info(
        { address, published: writes.set.length, cleared: writes.clear.length },
        'wrote the load-balancer address in Ingress status',
      );
    }
  }

  /** Forgets what Ingresses carry (after losing leadership another replica writes). */
  forget(): void {
    this.#known = undefined;
  }

  /** The address to publish; undefined (reported once) when there is none yet. */
  async #address(): Promise<readonly LoadBalancerAddress[] | undefined> {
    const { source } = this.#options;
    if ('addresses' in source) return source.addresses;
    const { namespace, name } = source.service;
    let problem: string;
    try {
      const address = serviceAddresses(await this.#core.readNamespacedService({ namespace, name }));
      if (address.length > 0) {
        this.#lastProblem = undefined;
        return address;
      }
      problem = `The Service ${namespace}/${name} (--publish-service) has no load-balancer, external or cluster IP; Ingress status is left as it is until it has one.`;
    } catch (error) {
      problem =
        apiStatus(error) === 404
          ? `The Service ${namespace}/${name} (--publish-service) does not exist; Ingress status is left as it is until it does.`
          : `Could not read the Service ${namespace}/${name} (--publish-service): ${describeApiError(error)}.`;
    }
    if (problem !== this.#lastProblem) this.#options.logger.warn(problem);
    this.#lastProblem = problem;
    return undefined;
  }

  /** What every Ingress carries now; undefined (logged) when the list fails. */
  async #list(
    served: ReadonlySet<string>,
    address: readonly LoadBalancerAddress[],
  ): Promise<Map<string, LoadBalancerAddress[]> | undefined> {
    try {
      const list = await this.#networking.listIngressForAllNamespaces();
      return knownStatuses(
        list.items.map((ingress) => ({
          key: objectKey(ingress.metadata?.namespace ?? '', ingress.metadata?.name ?? ''),
          addresses: ingress.status?.loadBalancer?.ingress ?? [],
        })),
        served,
        address,
      );
    } catch (error) {
      this.#options.logger.warn(
        { err: describeApiError(error) },
        'could not list Ingresses to publish their status; trying again at the next reconcile',
      );
      return undefined;
    }
  }

  /**
   * One JSON patch of an Ingress's status: `done`; `gone` (404); `refused` (422: a `test`
   * found other addresses, or the API server refused the value, logged); `failed` (logged,
   * to try again at the next reconcile).
   */
  async #write(
    key: string,
    patch: readonly Record<string, unknown>[],
  ): Promise<'done' | 'gone' | 'refused' | 'failed'> {
    try {
      await this.#networking.patchNamespacedIngressStatus({
        ...split(key),
        body: patch,
        fieldManager: this.#options.fieldManager,
      });
      return 'done';
    } catch (error) {
      const status = apiStatus(error);
      if (status === 404) return 'gone';
      const isTest = patch.some((operation) => operation.op === 'test');
      if (status !== 422 || !isTest) {
        this.#options.logger.warn(
          { ingress: key, err: describeApiError(error) },
          'could not write the Ingress status',
        );
      }
      return status === 422 ? 'refused' : 'failed';
    }
  }
}
