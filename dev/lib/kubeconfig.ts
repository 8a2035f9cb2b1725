import { writeFileSync } from 'node:fs';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export interface ClusterAccess {
  readonly server: string;
  /** Base64 PEM of the API server's CA. */
  readonly caData: string;
}

export type Credentials =
  | { readonly clientCertificateData: string; readonly clientKeyData: string }
  | { readonly token: string };

/** A single-context kubeconfig (YAML) for one cluster and one identity. */
export function renderKubeconfig(
  cluster: ClusterAccess,
  user: string,
  credentials: Credentials,
  namespace?: string,
): string {
  const userEntry =
    'token' in credentials
      ? { token: credentials.token }
      : {
          'client-certificate-data': credentials.clientCertificateData,
          'client-key-data': credentials.clientKeyData,
        };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'haptic-dev',
        cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData },
      },
    ],
    users: [{ name: user, user: userEntry }],
    contexts: [
      {
        name: 'haptic-dev',
        context: { cluster: 'haptic-dev', user, ...(namespace === undefined ? {} : { namespace }) },
      },
    ],
    'current-context': 'haptic-dev',
  });
}

/**
 * Asks the API for a token of a ServiceAccount (TokenRequest, as the kubelet does for a pod)
 * and writes a kubeconfig at `path` that authenticates with that token only.
 */
export async function writeServiceAccountKubeconfig(
  admin: KubeConfig,
  namespace: string,
  serviceAccount: string,
  path: string,
): Promise<void> {
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  writeFileSync(
    path,
    renderKubeconfig(
      { server: cluster?.server ?? '', caData: cluster?.caData ?? '' },
      serviceAccount,
      { token: token.status?.token ?? '' },
      namespace,
    ),
    { mode: 0o600 },
  );
}
