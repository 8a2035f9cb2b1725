/**
 * Proves the real cert-manager controller and cainjector (tools/cert-manager) do what the
 * chart's `GITOPS_CERTIFICATES=cert-manager` variant relies on, on a private control plane
 * (etcd + kube-apiserver on loopback, started and stopped here):
 *
 *   selfSigned Issuer → CA Certificate (isCA) → CA Issuer → leaf Certificate for the webhook
 *   Service → ValidatingWebhookConfiguration annotated `cert-manager.io/inject-ca-from`
 *
 * and asserts the leaf Secret (tls.crt with the Service's DNS name, issued by ca.crt; tls.key
 * matching it), its CertificateRequest Approved, the Certificate's Ready=True, the injected caBundle equal to the Secret's
 * ca.crt, and, as the failure path, a CA Issuer whose Secret is missing reported not Ready
 * with the Secret named.
 *
 *   node dev/gitops/cert-manager-check.ts
 *
 * The last line is one JSON object with the seconds each step took.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../lib/control-plane.ts';
import { startCertManager } from './cert-manager-controllers.ts';
import { clusterCli, type ClusterCli } from './cluster-cli.ts';

const namespace = 'haptic';
const serviceName = 'haptic-webhook.haptic.svc';
const leaf = { certificate: 'haptic-webhook', secret: 'haptic-webhook-tls' };
const webhookConfiguration = 'haptic-check';

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}
interface WithConditions {
  readonly status?: { readonly conditions?: readonly Condition[] };
}
interface CertificateRequestList {
  readonly items: readonly (WithConditions & {
    readonly metadata: {
      readonly name: string;
      readonly annotations?: Readonly<Record<string, string>>;
    };
  })[];
}
interface SecretObject {
  readonly data?: Readonly<Record<string, string>>;
}
interface WebhookConfigurationObject {
  readonly webhooks: readonly { readonly clientConfig: { readonly caBundle?: string } }[];
}

const issuerRef = (name: string) => ({ name, kind: 'Issuer', group: 'cert-manager.io' });
const manifests = {
  selfSigned: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'selfsigned', namespace },
    spec: { selfSigned: {} },
  },
  ca: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'haptic-ca', namespace },
    spec: {
      isCA: true,
      commonName: 'haptic check CA',
      secretName: 'haptic-ca',
      privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: issuerRef('selfsigned'),
    },
  },
  caIssuer: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'haptic-ca', namespace },
    spec: { ca: { secretName: 'haptic-ca' } },
  },
  leaf: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: leaf.certificate, namespace },
    spec: {
      secretName: leaf.secret,
      dnsNames: [serviceName],
      privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: issuerRef('haptic-ca'),
    },
  },
  // Matches no object (its objectSelector names a label nothing carries), so the
  // kube-apiserver never calls the absent Service.
  webhook: {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: {
      name: webhookConfiguration,
      annotations: { 'cert-manager.io/inject-ca-from': `${namespace}/${leaf.certificate}` },
    },
    webhooks: [
      {
        name: 'check.haptic.example',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { 'haptic.example/never': 'true' } },
        clientConfig: { service: { namespace, name: 'haptic-webhook', path: '/validate' } },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE'],
            resources: ['configmaps'],
          },
        ],
      },
    ],
  },
  brokenIssuer: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'missing-ca', namespace },
    spec: { ca: { secretName: 'no-such-secret' } },
  },
};

/** Polls `read` every 250 ms until it returns a value; throws with `what` after `ms`. */
async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${String(ms)} ms waiting for ${what}`);
    await sleep(250);
  }
}

async function condition(
  cli: ClusterCli,
  kind: string,
  name: string,
): Promise<Condition | undefined> {
  const object = await cli.kubectlJson<WithConditions>(['get', kind, name, '-n', namespace]);
  return object.status?.conditions?.find((c) => c.type === 'Ready');
}

async function ready(cli: ClusterCli, kind: string, name: string): Promise<void> {
  await until(`${kind}/${name} Ready=True`, async () => {
    const c = await condition(cli, kind, name);
    return c?.status === 'True' ? c : undefined;
  });
}

async function apply(cli: ClusterCli, object: object): Promise<void> {
  await cli.kubectl(['apply', '-f', '-'], JSON.stringify(object));
}

function assertLeafSecret(secret: SecretObject): string {
  const data = secret.data ?? {};
  const field = (key: string): Buffer => {
    const value = data[key];
    if (value === undefined || value === '') {
      throw new Error(`Secret ${namespace}/${leaf.secret} has no ${key}`);
    }
    return Buffer.from(value, 'base64');
  };
  const certificate = new X509Certificate(field('tls.crt'));
  const ca = new X509Certificate(field('ca.crt'));
  const key = createPrivateKey(field('tls.key'));
  const sans = certificate.subjectAltName ?? '';
  if (!sans.split(', ').includes(`DNS:${serviceName}`)) {
    throw new Error(`tls.crt names ${sans || 'no SAN'}, not DNS:${serviceName}`);
  }
  if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey)) {
    throw new Error(
      `tls.crt (issuer ${certificate.issuer}) is not signed by ca.crt (${ca.subject})`,
    );
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new Error('tls.key is not the private key of tls.crt');
  }
  const curve = createPublicKey(key).asymmetricKeyDetails?.namedCurve;
  if (curve !== 'prime256v1') {
    throw new Error(
      `tls.key is ${curve ?? 'not an EC key'}, not the ECDSA P-256 key the Certificate asks for`,
    );
  }
  if (!ca.ca) throw new Error(`ca.crt (${ca.subject}) is not a CA certificate`);
  return data['ca.crt'] ?? '';
}

/** The leaf's CertificateRequest was Approved (by the approver loop) before it was signed. */
async function assertRequestApproved(cli: ClusterCli): Promise<void> {
  const requests = await cli.kubectlJson<CertificateRequestList>([
    'get',
    'certificaterequests',
    '-n',
    namespace,
  ]);
  const ofLeaf = requests.items.filter(
    (r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === leaf.certificate,
  );
  const approved = ofLeaf.filter((r) =>
    (r.status?.conditions ?? []).some((c) => c.type === 'Approved' && c.status === 'True'),
  );
  if (ofLeaf.length === 0 || approved.length !== ofLeaf.length) {
    throw new Error(
      `CertificateRequests of ${leaf.certificate}: ${String(ofLeaf.length)}, Approved: ${String(approved.length)}; every one must be Approved`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cert-manager-check-'));
const seconds: Record<string, number> = {};
const timed = async <T>(step: string, run: () => Promise<T>): Promise<T> => {
  const start = performance.now();
  const result = await run();
  seconds[step] = Number(((performance.now() - start) / 1000).toFixed(2));
  return result;
};

const plane = await timed('controlPlane', () => startControlPlane({ dir: join(dir, 'plane') }));
let passed = false;
try {
  const cli = clusterCli(plane.kubeconfigPath);
  const certManager = await timed('certManagerStart', () =>
    startCertManager(plane.kubeconfigPath, join(dir, 'cert-manager')),
  );
  try {
    await cli.kubectl(['create', 'namespace', namespace]);
    await timed('caReady', async () => {
      await apply(cli, manifests.selfSigned);
      await apply(cli, manifests.ca);
      await ready(cli, 'certificate', 'haptic-ca');
      await apply(cli, manifests.caIssuer);
      await ready(cli, 'issuer', 'haptic-ca');
    });
    await timed('leafReady', async () => {
      await apply(cli, manifests.leaf);
      await ready(cli, 'certificate', leaf.certificate);
    });
    await assertRequestApproved(cli);
    const secret = await cli.kubectlJson<SecretObject>([
      'get',
      'secret',
      leaf.secret,
      '-n',
      namespace,
    ]);
    const caBundle = assertLeafSecret(secret);

    await timed('caInjected', async () => {
      await apply(cli, manifests.webhook);
      await until('the caBundle injected into the ValidatingWebhookConfiguration', async () => {
        const config = await cli.kubectlJson<WebhookConfigurationObject>([
          'get',
          'validatingwebhookconfiguration',
          webhookConfiguration,
        ]);
        const injected = config.webhooks[0]?.clientConfig.caBundle;
        if (injected === undefined || injected === '') return undefined;
        if (injected !== caBundle) {
          throw new Error('the injected caBundle differs from the leaf Secret’s ca.crt');
        }
        return injected;
      });
    });

    await timed('brokenIssuerRefused', async () => {
      await apply(cli, manifests.brokenIssuer);
      const refused = await until('Issuer/missing-ca Ready=False', async () => {
        const c = await condition(cli, 'issuer', 'missing-ca');
        return c?.status === 'False' ? c : undefined;
      });
      if (!(refused.message ?? '').includes('no-such-secret')) {
        throw new Error(
          `Issuer/missing-ca is not Ready but does not name its Secret: ${JSON.stringify(refused)}`,
        );
      }
    });
    passed = true;
    console.log(JSON.stringify({ passed, seconds, versions: certManager.versions }));
  } finally {
    await certManager.stop();
  }
} finally {
  await plane.stop();
  if (passed) rmSync(dir, { recursive: true, force: true });
  else console.error(`logs kept in ${dir}`);
}
