/**
 * The API server's side of client-certificate authentication, as docs/webhook-authentication.md
 * gives it, proven against a real kube-apiserver: started with the guide's AdmissionConfiguration
 * (taken from the guide's text, only the directory changed), it presents the client certificate
 * its webhook kubeconfig names for `haptic-webhook.haptic.svc`, and the webhook, which requires
 * one, reviews the request. For a Service the kubeconfig does not name, the API server presents
 * nothing, the webhook refuses the handshake, and the write fails (failurePolicy Fail).
 *
 * The kube-apiserver reaches the Services through their EndpointSlices
 * (--enable-aggregator-routing), which point at this host's first non-loopback IPv4 address.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { type ControlPlane, startControlPlane } from '../../../dev/lib/control-plane.ts';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import { encodeCertificateChain, encodePrivateKey, issueLeaf } from '../../../src/pki/index.ts';
import {
  type WatchedCertificateSource,
  type WebhookServer,
  startWebhook,
  watchServingCertificate,
} from '../../../src/webhook/index.ts';
import { makeCa } from '../../unit/validation/material.ts';
import { servingMaterial } from './registered-webhook.ts';

/** Where the guide puts the API server's files; the test puts them in its own directory. */
const guideDir = '/etc/kubernetes/admission/';

/** The YAML block of the guide that starts with `# <path>` (the file the guide names). */
function guideFile(path: string): string {
  const guide = readFileSync(join(projectRoot, 'docs/webhook-authentication.md'), 'utf8');
  const blocks = [...guide.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const block = blocks
    .map((text) => text.replace(/^ {3}/gm, ''))
    .find((text) => text.startsWith(`# ${path}\n`));
  if (block === undefined) throw new Error(`docs/webhook-authentication.md has no ${path}`);
  return block;
}

function hostAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
  if (address === undefined) throw new Error('this host has no non-loopback IPv4 address');
  return address.address;
}

const logger = pino({ level: 'silent' });
const root = mkdtempSync(join(tmpdir(), 'apiserver-client-auth-'));
const seen: { uid: string; kind: string; secret: string }[] = [];
let plane: ControlPlane | undefined;
let certificates: WatchedCertificateSource | undefined;
let server: WebhookServer | undefined;

async function kubectl(args: readonly string[], input?: string) {
  if (plane === undefined) throw new Error('no control plane');
  const result = await execa(toolPath('kubectl'), ['--kubeconfig', plane.kubeconfigPath, ...args], {
    reject: false,
    ...(input === undefined ? {} : { input }),
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(async () => {
  const serving = await servingMaterial(['haptic-webhook.haptic.svc', 'other-webhook.haptic.svc']);
  const clientCa = await makeCa('haptic-webhook-client-ca', { at: new Date() });
  const apiServer = await issueLeaf({
    role: 'controller',
    dnsName: 'kube-apiserver-webhook-client',
    issuer: { certificate: clientCa.certificate, privateKey: clientCa.keys.privateKey },
    validityDays: 1,
    now: new Date(),
  });

  // The API server's files, as the guide writes them.
  const admission = join(root, 'admission');
  mkdirSync(admission);
  const local = (text: string) => text.replaceAll(guideDir, `${admission}/`);
  writeFileSync(
    join(admission, 'apiserver-webhook.crt'),
    encodeCertificateChain([apiServer.certificate]),
  );
  writeFileSync(
    join(admission, 'apiserver-webhook.key'),
    encodePrivateKey(apiServer.keys.privateKey),
  );
  for (const name of ['webhook-kubeconfig.yaml', 'admission-configuration.yaml']) {
    writeFileSync(join(admission, name), local(guideFile(`${guideDir}${name}`)));
  }
  plane = await startControlPlane({
    dir: join(root, 'plane'),
    extraApiServerArgs: [
      `--admission-control-config-file=${join(admission, 'admission-configuration.yaml')}`,
      '--enable-aggregator-routing=true',
    ],
  });

  // The webhook, with the CA in the Secret the guide creates mounted as the chart mounts it.
  const servingDir = join(root, 'webhook-tls');
  const clientCaDir = join(root, 'webhook-client-ca');
  await writeAtomicProjection(servingDir, {
    'tls.crt': Buffer.from(serving.certPem),
    'tls.key': Buffer.from(serving.keyPem),
  });
  await writeAtomicProjection(clientCaDir, {
    'ca.crt': Buffer.from(encodeCertificateChain([clientCa.certificate])),
  });
  certificates = await watchServingCertificate({ dir: servingDir, clientCaDir, logger });
  server = await startWebhook(
    { onReview: (event) => seen.push({ uid: event.uid, kind: event.kind, secret: event.secret }) },
    { host: '0.0.0.0', port: 0, certificates },
  );

  const address = hostAddress();
  const service = (name: string) => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'haptic' },
      spec: { type: 'ClusterIP', ports: [{ name: 'webhook', port: 443, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace: 'haptic',
        labels: { 'kubernetes.io/service-name': name },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'webhook', port: server?.port, protocol: 'TCP' }],
    },
  ];
  const webhook = (name: string, serviceName: string) => ({
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 5,
    clientConfig: {
      service: { name: serviceName, namespace: 'haptic', port: 443, path: '/validate' },
      caBundle: Buffer.from(serving.caPem).toString('base64'),
    },
    rules: [
      {
        apiGroups: [''],
        apiVersions: ['v1'],
        operations: ['CREATE'],
        resources: ['configmaps'],
      },
    ],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'haptic' } },
    objectSelector: { matchLabels: { caller: serviceName } },
  });
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'haptic' } },
    ...service('haptic-webhook'),
    ...service('other-webhook'),
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'client-auth-test' },
      webhooks: [
        webhook('named.haptic.haproxy.org', 'haptic-webhook'),
        webhook('unnamed.haptic.haproxy.org', 'other-webhook'),
      ],
    },
  ];
  const applied = await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  expect(applied.stderr).toBe('');
}, 180_000);

afterAll(async () => {
  await server?.close();
  certificates?.close();
  await plane?.stop();
});

/** Creates ConfigMap `name` labelled for the webhook of `serviceName`. */
function createConfigMap(name: string, serviceName: string) {
  return kubectl(
    ['create', '-n', 'haptic', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'haptic', labels: { caller: serviceName } },
    }),
  );
}

describe("the guide's AdmissionConfiguration on a real kube-apiserver", () => {
  it('authenticates the API server to the webhook its kubeconfig names, and only to that one', async () => {
    // The registration reaches the API server's admission through an informer: retry until
    // the first ConfigMap is reviewed (those created before are admitted without a call).
    let attempt = 0;
    await expect
      .poll(
        async () => {
          attempt += 1;
          const created = await createConfigMap(`named-${attempt}`, 'haptic-webhook');
          expect(created.stderr).toBe('');
          return seen.some((review) => review.secret === `haptic/named-${attempt}`);
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(true);
    expect(seen.at(-1)).toMatchObject({ kind: 'ConfigMap', secret: `haptic/named-${attempt}` });

    const refused = await createConfigMap('unnamed', 'other-webhook');
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain('failed calling webhook "unnamed.haptic.haproxy.org"');
    // TLS 1.3 ends the client's handshake before the server checks for a certificate: the
    // API server reads the server's "certificate required" alert, or, when it is still
    // writing the review, finds the connection the server closed after that alert.
    expect(refused.stderr).toMatch(
      /tls: certificate required|write tcp [^ ]+: use of closed network connection|connection reset by peer/,
    );
    expect(seen.map((review) => review.secret)).not.toContain('haptic/unnamed');
    expect((await kubectl(['get', 'configmap', '-n', 'haptic', 'unnamed'])).exitCode).not.toBe(0);
  });
});
