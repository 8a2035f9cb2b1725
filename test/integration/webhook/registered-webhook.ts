/**
 * A real webhook for integration tests: served over real TLS on `webhookHost` (the host's end of
 * the node's link, which the node's kube-apiserver reaches) with a test CA's certificate (IP
 * SANs 127.0.0.1 and `webhookHost`), registered with the shared kube-apiserver through a
 * ValidatingWebhookConfiguration scoped to one test namespace, so parallel tests are never
 * affected. `stop` deregisters it and closes the server.
 */
import { hostAddress } from '../../../dev/lib/node/node-network.ts';
import {
  Certificate,
  encodeCertificateChain,
  encodePrivateKey,
  generateKeyPair,
} from '../../../src/pki/index.ts';
import { peculiarX509 } from '../../../src/pki/peculiar-loader.ts';
import { type AgentIdentityConfig, preRolloutNames } from '../../../src/validation/index.ts';
import {
  type WebhookServer,
  createReleaseIo,
  fixedCertificateSource,
  loadEmbeddedChart,
  startWebhook,
} from '../../../src/webhook/index.ts';
import { createKubeLiveReader } from '../../../src/webhook/kube-live-reader.ts';
import { adminKubeConfig, kubectl } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';
import { makeCa } from '../../unit/validation/material.ts';

export interface ServingMaterial {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** Where webhooks the node's kube-apiserver calls listen: the host's address on the node's link. */
export const webhookHost = hostAddress;

/**
 * A CA and a serving certificate valid now: for IPs 127.0.0.1 and `webhookHost`, or for the
 * DNS names of webhook Services (`<service>.<namespace>.svc`) when given.
 */
export async function servingMaterial(
  serviceNames?: string | readonly string[],
): Promise<ServingMaterial> {
  const names = typeof serviceNames === 'string' ? [serviceNames] : serviceNames;
  const now = new Date();
  const ca = await makeCa('webhook-test-ca', { at: now, days: 2 });
  const keys = await generateKeyPair();
  const x509 = peculiarX509();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: '0a1b2c3d4e5f',
    subject: `CN=${names?.[0] ?? '127.0.0.1'}`,
    issuer: ca.certificate.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 86_400_000),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions: [
      new x509.SubjectAlternativeNameExtension(
        names === undefined
          ? [
              { type: 'ip', value: '127.0.0.1' },
              { type: 'ip', value: webhookHost },
            ]
          : names.map((value) => ({ type: 'dns', value })),
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  return {
    caPem: encodeCertificateChain([ca.certificate]),
    certPem: encodeCertificateChain([Certificate.fromDer(new Uint8Array(certificate.rawData))]),
    keyPem: encodePrivateKey(keys.privateKey),
  };
}

export interface RegisteredWebhook {
  readonly server: WebhookServer;
  readonly material: ServingMaterial;
  readonly url: string;
  stop(): Promise<void>;
}

function registration(
  name: string,
  namespace: string,
  url: string,
  caPem: string,
  identityNames: readonly string[],
  valuesSecret: string,
) {
  const common = {
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    timeoutSeconds: 5,
    matchPolicy: 'Equivalent',
    clientConfig: { url, caBundle: Buffer.from(caPem).toString('base64') },
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    rules: [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['secrets'],
        operations: ['CREATE', 'UPDATE'],
        scope: 'Namespaced',
      },
    ],
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: [
      {
        ...common,
        name: 'agent-identity-secrets.haptic.haproxy.org',
        failurePolicy: 'Fail',
        matchConditions: [
          {
            name: 'release-identity-secret',
            expression: `request.name in ${JSON.stringify(identityNames)}`,
          },
        ],
      },
      {
        ...common,
        name: 'pre-rollout-values.haptic.haproxy.org',
        failurePolicy: 'Ignore',
        matchConditions: [
          {
            name: 'release-pre-rollout-values',
            expression: `request.name == ${JSON.stringify(valuesSecret)}`,
          },
        ],
      },
    ],
  };
}

/**
 * Starts the webhook for release `haptic` in `namespace` with these identities and registers
 * it; resolves once the API server sends it requests.
 */
export async function registerWebhook(
  namespace: string,
  identities: AgentIdentityConfig,
): Promise<RegisteredWebhook> {
  const material = await servingMaterial();
  const live = createKubeLiveReader({
    kubeConfig: adminKubeConfig(),
    userAgent: 'haptic-test (webhook)',
  });
  const server = await startWebhook(
    {
      identities,
      release: {
        name: 'haptic',
        namespace,
        chart: loadEmbeddedChart(),
        io: createReleaseIo({ release: 'haptic', namespace, live }),
      },
    },
    {
      host: webhookHost,
      port: 0,
      certificates: fixedCertificateSource({
        cert: Buffer.from(material.certPem),
        key: Buffer.from(material.keyPem),
      }),
    },
  );
  const url = `https://${webhookHost}:${server.port}/validate`;
  const name = `haptic-test-${namespace}`;
  const names = [
    identities.serverSecret,
    identities.clientSecret,
    ...(identities.issuerSecret === undefined ? [] : [identities.issuerSecret]),
  ];
  const body = registration(
    name,
    namespace,
    url,
    material.caPem,
    names,
    preRolloutNames('haptic').valuesSecret,
  );
  const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(body));
  if (applied.exitCode !== 0) throw new Error(`registering the webhook failed: ${applied.stderr}`);
  await waitUntilServed(namespace, identities.serverSecret);
  return {
    server,
    material,
    url,
    async stop() {
      await kubectl(['delete', 'validatingwebhookconfiguration', name, '--ignore-not-found']);
      await server.close();
    },
  };
}

/** The API server picks registrations up asynchronously: probe with a dry run it must deny. */
async function waitUntilServed(namespace: string, secretName: string): Promise<void> {
  const probe = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName, namespace },
    data: { 'tls.crt': '' },
  };
  await eventually(
    'the API server calls the webhook',
    () => kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(probe)),
    (result) => result.stderr.includes('denied the request'),
    20_000,
  );
}
