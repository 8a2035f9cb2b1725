/**
 * The controller's Secret informer (ClusterWatch, as `haptic run` builds it) against the real
 * API server: a kubernetes.io/tls Secret labelled `haptic.haproxy.org/certificate-authority`,
 * as the chart's cert-manager CA Certificates label theirs, never reaches the cache, whether
 * it existed at the first list, was created while watching, or gained the label later; the
 * unlabelled TLS Secrets beside it do. Ordering makes the absence a proof: a watch delivers a
 * resource's events in resourceVersion order, so once a Secret written after the labelled one
 * is seen, the labelled one would have been seen before it.
 */
import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWatch } from '../../../src/controller/watch/cluster-watch.ts';
import { certificateAuthorityLabel } from '../../../src/controller/watch/watched-secrets.ts';
import { makeKubeClients } from '../../../src/kube/kube-clients.ts';
import { RequestCounter } from '../../../src/kube/request-counter.ts';
import { selfSignedCertificate } from '../../support/self-signed.ts';
import { adminKubeConfig, createTestNamespace } from '../../support/cluster.ts';
import { eventually } from './local-site.ts';

const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
let namespace = '';
let watch: ClusterWatch;
let tls: Record<string, string> = {};

function tlsSecret(name: string, labels: Record<string, string> = {}): V1Secret {
  return { metadata: { name, namespace, labels }, type: 'kubernetes.io/tls', data: tls };
}

const ca = { [certificateAuthorityLabel]: 'true' };

/** Names of this namespace's Secrets in the informer's cache. */
function cached(): string[] {
  return [...watch.snapshot().secrets.values()]
    .filter((secret) => secret.namespace === namespace)
    .map((secret) => secret.name)
    .sort();
}

beforeAll(async () => {
  namespace = await createTestNamespace('watched-secrets');
  const pair = await selfSignedCertificate('ca-label.example.com');
  tls = {
    'tls.crt': Buffer.from(pair.cert).toString('base64'),
    'tls.key': Buffer.from(pair.key).toString('base64'),
  };
  await core.createNamespacedSecret({ namespace, body: tlsSecret('ca-before', ca) });
  await core.createNamespacedSecret({ namespace, body: tlsSecret('leaf-before') });
  watch = new ClusterWatch({
    clients: makeKubeClients(kubeConfig, {
      counter: new RequestCounter(),
      userAgent: 'haptic-test/watched-secrets',
    }),
    namespace,
    templateConfigName: 'haptic',
    ingressClass: 'haptic',
    fqdnEndpoints: false,
    onChange: () => undefined,
    logger: pino({ level: 'silent' }),
  });
  await watch.start();
});

afterAll(async () => {
  await watch.stop();
  await core.deleteNamespace({ name: namespace });
});

describe("the controller's Secret informer", () => {
  it('lists TLS Secrets but not a labelled CA Secret', () => {
    expect(cached()).toEqual(['leaf-before']);
  });

  it('never sees a labelled CA Secret created while it watches', async () => {
    await core.createNamespacedSecret({ namespace, body: tlsSecret('ca-after', ca) });
    await core.createNamespacedSecret({ namespace, body: tlsSecret('leaf-after') });
    await eventually(
      'leaf-after in the cache',
      () => Promise.resolve(cached()),
      (names) => names.includes('leaf-after'),
    );
    expect(cached()).toEqual(['leaf-after', 'leaf-before']);
  });

  it('drops a TLS Secret once it is labelled as a CA (cert-manager adding the label later)', async () => {
    await core.patchNamespacedSecret({
      name: 'leaf-before',
      namespace,
      body: [{ op: 'add', path: '/metadata/labels', value: ca }],
    });
    await eventually(
      'leaf-before gone from the cache',
      () => Promise.resolve(cached()),
      (names) => !names.includes('leaf-before'),
    );
    expect(cached()).toEqual(['leaf-after']);
  });
});
