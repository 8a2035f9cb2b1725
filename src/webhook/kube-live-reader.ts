/**
 * Live reads for the validator through the Kubernetes API: the Secrets a release names (the
 * issuer Secret as metadata only) and the identity Secrets its running Deployments mount.
 * Read-only; a missing object is `undefined`.
 * Kept apart from the rest of the webhook so offline runs never load the Kubernetes client.
 */
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Secret,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { apiStatus, kubeRequestError } from '../kube/api-errors.ts';
import { DeploymentClient } from '../kube/deployments.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { SecretClient } from '../kube/secrets.ts';
import { loadKubeConfig } from '../kube/kube-config.ts';
import type { SecretObject } from '../validation/index.ts';
import type { LiveReader } from './release-io.ts';

function secretObject(secret: V1Secret, namespace: string): SecretObject {
  return {
    name: secret.metadata?.name ?? '',
    namespace: secret.metadata?.namespace ?? namespace,
    labels: secret.metadata?.labels ?? {},
    annotations: secret.metadata?.annotations ?? {},
    data: secret.data ?? {},
  };
}

/** Asks the API server for an object's metadata only (a PartialObjectMetadata, no data). */
const metadataOnly = setHeaderOptions(
  'Accept',
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
);

export interface KubeLiveReaderOptions {
  /** A kubeconfig file; otherwise KUBECONFIG, ~/.kube/config or the Pod's ServiceAccount. */
  readonly kubeconfig?: string;
  /** Loaded configuration, instead of `kubeconfig`. */
  readonly kubeConfig?: KubeConfig;
  /** User-Agent of the requests, naming the command. */
  readonly userAgent: string;
}

export interface KubeLiveReader extends LiveReader {
  readonly counter: RequestCounter;
}

export function createKubeLiveReader(options: KubeLiveReaderOptions): KubeLiveReader {
  const kc = options.kubeConfig ?? loadKubeConfig(options.kubeconfig);
  const counter = new RequestCounter();
  const client = { counter, userAgent: options.userAgent };
  const core = makeApiClient(kc, CoreV1Api, client);
  const apps = makeApiClient(kc, AppsV1Api, client);
  return {
    counter,
    async readSecret(namespace, name) {
      const secret = await new SecretClient(core, namespace).read(name);
      return secret === undefined ? undefined : secretObject(secret, namespace);
    },
    async readSecretMetadata(namespace, name) {
      try {
        const found = await core.readNamespacedSecret({ name, namespace }, metadataOnly);
        return secretObject(found, namespace);
      } catch (error) {
        if (apiStatus(error) === 404) return undefined;
        throw kubeRequestError(`read the metadata of Secret ${namespace}/${name}`, error);
      }
    },
    async readMountedSecret(namespace, deployment, volume) {
      try {
        const found = await new DeploymentClient(apps, namespace).read(deployment);
        const mounted = found?.spec?.template.spec?.volumes?.find((v) => v.name === volume);
        return mounted?.secret?.secretName;
      } catch (error) {
        // Advisory only: without permission to read Deployments, skip the switch warning.
        if (error instanceof HapticError && error.code === errorCodes.KUBE_FORBIDDEN) {
          return undefined;
        }
        throw error;
      }
    },
  };
}
