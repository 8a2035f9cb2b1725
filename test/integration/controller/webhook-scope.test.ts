/**
 * The controller's webhook reviews only the HAProxyTemplateConfig it renders (`--template-config`
 * in its namespace). Two doors, both real: an unauthenticated POST straight to :9443, as anyone
 * who reaches the port could send it, and the API server calling the chart's own
 * ValidatingWebhookConfiguration (rendered by helm, pointed at this controller by URL).
 * The proof that nothing was rendered for a foreign name: the same hostile template (its
 * rendered configuration loads Lua) is allowed under that name and denied, with the lint's
 * reason, under the configured one; through the API server, the controller does not even
 * receive the foreign write (its review counter does not move).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/lib/free-port.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { helm, kubectl } from '../../support/cluster.ts';
import {
  type ReviewAnswer,
  admissionReview as sharedReview,
  postUnauthenticatedReview,
} from '../../support/unauthenticated-review.ts';
import {
  type ServingMaterial,
  servingMaterial,
  webhookHost,
} from '../webhook/registered-webhook.ts';
import { LocalSite } from './local-site.ts';

let site: LocalSite;
let material: ServingMaterial;
let port = 0;
let registration = '';

interface TemplateConfigObject extends Record<string, unknown> {
  metadata: { name: string; namespace: string };
  spec: { haproxyConfig: { template: string } } & Record<string, unknown>;
}

/** The chart's own HAProxyTemplateConfig, renamed, with a template the lint refuses. */
async function hostileConfig(name: string, namespace: string): Promise<TemplateConfigObject> {
  const got = await kubectl([
    'get',
    'haproxytemplateconfig',
    'haptic',
    '-n',
    site.namespace,
    '-o',
    'json',
  ]);
  const installed = JSON.parse(got.stdout) as TemplateConfigObject;
  const template = installed.spec.haproxyConfig.template.replace(
    'global\n',
    'global\n  lua-load /tmp/haptic-scope-marker.lua\n',
  );
  expect(template).toContain('lua-load');
  return {
    apiVersion: installed.apiVersion,
    kind: installed.kind,
    metadata: { name, namespace },
    spec: { ...installed.spec, haproxyConfig: { ...installed.spec.haproxyConfig, template } },
  };
}

const templateConfigKind = {
  group: 'haproxy-haptic.org',
  version: 'v1alpha1',
  kind: 'HAProxyTemplateConfig',
} as const;

function admissionReview(uid: string, object: TemplateConfigObject): string {
  return sharedReview(uid, templateConfigKind, 'haproxytemplateconfigs', object);
}

/** POST /validate without a client certificate: what anyone who reaches :9443 can do. */
function postUnauthenticated(body: string): Promise<ReviewAnswer> {
  return postUnauthenticatedReview({ host: webhookHost, port, caPem: material.caPem }, body);
}

/** One series of the controller's Prometheus metrics (0 when absent). */
async function metric(series: string): Promise<number> {
  const controller = site.controllers[0];
  if (controller === undefined) throw new Error('no controller');
  const text = await (await fetch(`http://${controller.address}:9090/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const templateConfigReviews = (verdict: string): string =>
  `haptic_webhook_requests_total{kind="HAProxyTemplateConfig",verdict="${verdict}"}`;

/** The chart's ValidatingWebhookConfiguration for this release, pointed at the test's port. */
async function chartRegistration(): Promise<Record<string, unknown>> {
  const rendered = await helm([
    'template',
    'haptic',
    join(projectRoot, 'chart'),
    '-n',
    site.namespace,
    '--set',
    `ingressClass.name=${site.ingressClass}`,
    '--set',
    'controller.webhook.secretName=webhook-tls',
    '--set',
    `controller.webhook.caBundle=${Buffer.from(material.caPem).toString('base64')}`,
    '--show-only',
    'templates/webhook-validatingwebhookconfiguration.yaml',
  ]);
  if (rendered.exitCode !== 0) throw new Error(rendered.stderr);
  const [document] = parseAllDocuments(rendered.stdout).map(
    (doc) => doc.toJS() as { webhooks: Record<string, unknown>[] },
  );
  if (document === undefined) throw new Error('no ValidatingWebhookConfiguration rendered');
  const url = `https://${webhookHost}:${String(port)}/validate`;
  return {
    ...document,
    metadata: { name: `haptic-scope-${site.namespace}` },
    webhooks: document.webhooks
      .filter((webhook) => webhook.name === 'haproxytemplateconfigs.haptic.haproxy.org')
      .map((webhook) => ({
        ...webhook,
        failurePolicy: 'Fail',
        clientConfig: { url, caBundle: Buffer.from(material.caPem).toString('base64') },
      })),
  };
}

function dryRun(object: Record<string, unknown>) {
  return kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
}

beforeAll(async () => {
  material = await servingMaterial();
  port = await freePort();
  const certDir = join(process.env.TMPDIR ?? '/tmp', `haptic-scope-${String(port)}`);
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, 'tls.crt'), material.certPem);
  writeFileSync(join(certDir, 'tls.key'), material.keyPem);
  site = await LocalSite.start('ctl-scope', 1, [
    `--webhook-cert-dir=${certDir}`,
    `--webhook-listen=${webhookHost}:${String(port)}`,
  ]);
  const body = await chartRegistration();
  registration = `haptic-scope-${site.namespace}`;
  const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(body));
  expect(applied.exitCode, applied.stderr).toBe(0);
  // The API server picks registrations up asynchronously: wait until it sends us the
  // configured HAProxyTemplateConfig (a hostile one is denied then).
  const probe = await hostileConfig('haptic', site.namespace);
  for (let i = 0; i < 100 && !(await dryRun(probe)).stderr.includes('denied'); i += 1) {
    await sleep(200);
  }
}, 180_000);

afterAll(async () => {
  await kubectl(['delete', 'validatingwebhookconfiguration', registration, '--ignore-not-found']);
  await site.stop();
});

describe('the webhook reviews only the configured HAProxyTemplateConfig', () => {
  it('allows a foreign one posted without credentials, without looking at it', async () => {
    const foreign = [
      await hostileConfig('foreign', site.namespace),
      await hostileConfig('haptic', 'other-namespace'),
      await hostileConfig('haptic-2', site.namespace),
    ];
    const answers: ReviewAnswer[] = [];
    for (const [index, object] of foreign.entries()) {
      answers.push(await postUnauthenticated(admissionReview(`foreign-${String(index)}`, object)));
    }
    expect(answers).toEqual([
      { uid: 'foreign-0', allowed: true },
      { uid: 'foreign-1', allowed: true },
      { uid: 'foreign-2', allowed: true },
    ]);
  });

  it('denies the same template under the configured name, with the reason', async () => {
    const answer = await postUnauthenticated(
      admissionReview('ours', await hostileConfig('haptic', site.namespace)),
    );
    expect(answer).toMatchObject({ uid: 'ours', allowed: false, status: { code: 403 } });
    expect(answer.status?.message).toContain('lua-load');
  });

  it("is not even called by the API server for a foreign one under the chart's registration", async () => {
    const calls = async (): Promise<number> =>
      (await metric(templateConfigReviews('allowed'))) +
      (await metric(templateConfigReviews('denied')));
    const before = await calls();
    const foreign = await dryRun(await hostileConfig('foreign', site.namespace));
    expect(foreign.stderr).toBe('');
    expect(foreign.exitCode).toBe(0);
    expect(await calls()).toBe(before);

    const ours = await dryRun(await hostileConfig('haptic', site.namespace));
    expect(ours.exitCode).not.toBe(0);
    expect(ours.stderr).toContain('denied the request');
    expect(ours.stderr).toContain('lua-load');
    expect(await calls()).toBe(before + 1);
  });
});
