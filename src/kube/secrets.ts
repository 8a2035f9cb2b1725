/**
 * Typed Secret access in one namespace: read (absent is `undefined`), create, and replace
 * with the read object's resourceVersion as precondition. A lost race is `KUBE_CONFLICT`.
 * No business rules: callers decide what to write.
 */
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import { apiStatus, describeApiError, kubeRequestError } from './api-errors.ts';

export class SecretClient {
  readonly #core: CoreV1Api;
  readonly namespace: string;

  constructor(core: CoreV1Api, namespace: string) {
    this.#core = core;
    this.namespace = namespace;
  }

  /** `namespace/name`, as messages name a Secret. */
  #describe(name: string): string {
    return `${this.namespace}/${name}`;
  }

  /** The Secret, or undefined when it does not exist. */
  async read(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.#core.readNamespacedSecret({ name, namespace: this.namespace });
    } catch (error) {
      if (apiStatus(error) === 404) return undefined;
      throw kubeRequestError(`read Secret ${this.#describe(name)}`, error);
    }
  }

  /** Creates the Secret; `KUBE_CONFLICT` when one of that name appeared meanwhile. */
  async create(body: V1Secret): Promise<V1Secret> {
    const name = body.metadata?.name ?? '';
    try {
      return await this.#core.createNamespacedSecret({ namespace: this.namespace, body });
    } catch (error) {
      if (apiStatus(error) === 409) {
        throw new HapticError(
          errorCodes.KUBE_CONFLICT,
          `Secret ${this.#describe(name)} was created by another writer after it was found missing (${describeApiError(error)}).`,
          { cause: error },
        );
      }
      throw kubeRequestError(`create Secret ${this.#describe(name)}`, error);
    }
  }

  /**
   * Replaces the Secret. `body.metadata.resourceVersion` must be the version read: the API
   * server applies the write only if the Secret is still at that version, else `KUBE_CONFLICT`.
   */
  async replace(body: V1Secret): Promise<V1Secret> {
    const name = body.metadata?.name ?? '';
    const version = body.metadata?.resourceVersion;
    if (version === undefined || version === '') {
      throw new HapticError(
        errorCodes.KUBE_REQUEST_FAILED,
        `Refusing to replace Secret ${this.#describe(name)} without the resourceVersion it was read at.`,
      );
    }
    try {
      return await this.#core.replaceNamespacedSecret({ name, namespace: this.namespace, body });
    } catch (error) {
      const status = apiStatus(error);
      if (status === 409 || status === 404) {
        throw new HapticError(
          errorCodes.KUBE_CONFLICT,
          `Secret ${this.#describe(name)} changed after it was read at resourceVersion ${version} (${describeApiError(error)}).`,
          { cause: error },
        );
      }
      throw kubeRequestError(`replace Secret ${this.#describe(name)}`, error);
    }
  }
}
