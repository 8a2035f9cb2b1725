/**
 * The review deadline holds while a hostile template renders: the webhook `haptic run` serves
 * (HTTPS, dispatch with its 4 s deadline, the routing reviewer, the pipeline with its render
 * process) answers a HAProxyTemplateConfig review whose template loops 20,000,000 times
 * within the deadline, and its event loop stays free meanwhile.
 */
import { Agent, request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigPipeline } from '../../../src/controller/pipeline/config-pipeline.ts';
import { createRoutingReviewer } from '../../../src/controller/admission/routing-reviewer.ts';
import {
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../../../src/pki/index.ts';
import {
  type WebhookServer,
  defaultDeadlineMs,
  fixedCertificateSource,
  routingKindRoutes,
  startWebhook,
} from '../../../src/webhook/index.ts';
import { anyRangeEndpointRules } from '../../../src/validation/endpoint-addresses.ts';

let server: WebhookServer;
let agent: Agent;
// No review here reaches haproxy -c: the hostile template never finishes rendering.
const pipeline = new ConfigPipeline({
  ingressClass: 'haptic',
  check: { socket: '/nonexistent/check.sock' },
});

beforeAll(async () => {
  const now = new Date();
  const ca = await issueCa({ commonName: 'deadline-ca', validityDays: 2, now });
  const leaf = await issueLeaf({
    role: 'agent',
    dnsName: 'localhost',
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: 1,
    now,
  });
  const reviewer = createRoutingReviewer({
    watch: {
      snapshot: () => ({
        ingresses: [],
        services: new Map(),
        endpointSlices: new Map(),
        secrets: new Map(),
        fqdnNames: new Map(),
        endpointRules: anyRangeEndpointRules,
      }),
      templateConfig: () => undefined,
      ourClassIsDefault: () => false,
    },
    pipeline,
    ingressClass: 'haptic',
    namespace: 'haptic',
    templateConfigName: 'haptic',
  });
  server = await startWebhook(
    { kinds: routingKindRoutes(reviewer, { namespace: 'haptic', name: 'haptic' }) },
    {
      host: '127.0.0.1',
      port: 0,
      certificates: fixedCertificateSource({
        cert: Buffer.from(encodeCertificateChain([leaf.certificate])),
        key: Buffer.from(encodePrivateKey(leaf.keys.privateKey)),
      }),
    },
  );
  agent = new Agent({ ca: encodeCertificateChain([ca.certificate]) });
});

afterAll(async () => {
  agent.destroy();
  await server.close();
  await pipeline.close();
});

function post(body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/validate',
        method: 'POST',
        agent,
        servername: 'localhost',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          resolve(Buffer.concat(chunks).toString());
        });
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}

describe('an admission review of a hostile HAProxyTemplateConfig', () => {
  it('is answered within the deadline while the event loop stays free', async () => {
    const object = {
      apiVersion: 'haproxy-haptic.org/v1alpha1',
      kind: 'HAProxyTemplateConfig',
      metadata: { namespace: 'haptic', name: 'haptic', uid: 'u', resourceVersion: '7' },
      spec: { haproxyConfig: { template: '{% for i in (1..20000000) %}{% endfor %}global\n' } },
    };
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'review-1',
        kind: { group: 'haproxy-haptic.org', version: 'v1alpha1', kind: 'HAProxyTemplateConfig' },
        name: 'haptic',
        namespace: 'haptic',
        operation: 'UPDATE',
        userInfo: { username: 'tenant' },
        object,
        oldObject: object,
      },
    });
    let worstLateMs = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worstLateMs = Math.max(worstLateMs, now - last - 20);
      last = now;
    }, 20);
    const started = performance.now();
    const answer = await post(body).finally(() => {
      clearInterval(timer);
    });
    const ms = performance.now() - started;
    expect(ms).toBeLessThan(defaultDeadlineMs + 700);
    // A render on the event loop would stall it for the whole deadline; a quarter of it leaves
    // room for a loaded machine's scheduling (two cores shared with other suites) and still
    // fails for any render or check done in this process.
    expect(worstLateMs).toBeLessThan(defaultDeadlineMs / 4);
    const review = JSON.parse(answer) as { response: { uid: string; allowed: boolean } };
    expect(review.response).toMatchObject({ uid: 'review-1', allowed: false });
  });
});
