/** Reading Deployments in one namespace (absent is `undefined`). No business rules. */
import type { AppsV1Api, V1Deployment } from '@kubernetes/client-node';
import { apiStatus, kubeRequestError } from './api-errors.ts';

export class DeploymentClient {
  readonly #apps: AppsV1Api;
  readonly namespace: string;

  constructor(apps: AppsV1Api, namespace: string) {
    this.#apps = apps;
    this.namespace = namespace;
  }

  /** The Deployment, or undefined when it does not exist. */
  async read(name: string): Promise<V1Deployment | undefined> {
    try {
      return await this.#apps.readNamespacedDeployment({ name, namespace: this.namespace });
    } catch (error) {
      if (apiStatus(error) === 404) return undefined;
      throw kubeRequestError(`read Deployment ${this.namespace}/${name}`, error);
    }
  }
}
