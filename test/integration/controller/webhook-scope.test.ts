/**
 * The controller's webhook reviews only the HAProxyTemplateConfig it renders (`--template-config`
 * in its namespace). Two doors, both real: an unauthenticated POST straight to :9443, as anyone
 * who reaches the port could send it, and the API server calling the chart's own
 * ValidatingWebhookConfiguration through the webhook Service.
 * The proof that nothing was rendered for a foreign name: the same hostile template (its
 * rendered configuration loads Lua) is allowed under that name and denied, with the lint's
 * reason, under the configured one; through the API server, the controller does not even
 * receive the foreign write (its review counter does not move).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl } from '../../support/cluster.ts';
import {
  type ReviewAnswer,
  admissionReview as sharedReview,
  postUnauthenticatedReview,
} from '../../support/unauthenticated-review.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;

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
  const controller = site.controllers[0];
  if (controller === undefined) throw new Error('no controller');
  return postUnauthenticatedReview(
    {
      host: controller.address,
      port: 9443,
      caPem: site.webhookCaPem,
      servername: site.webhookService,
    },
    body,
  );
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

function dryRun(object: Record<string, unknown>) {
  return kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(object));
}

beforeAll(async () => {
  site = await LocalSite.start('ctl-scope', { webhook: true });
  // The API server picks registrations up asynchronously: wait until it sends us the
  // configured HAProxyTemplateConfig (a hostile one is denied then).
  const probe = await hostileConfig('haptic', site.namespace);
  await eventually(
    'the registered webhook denies',
    () => dryRun(probe),
    (result) => result.stderr.includes('denied'),
  );
}, 180_000);

afterAll(async () => {
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
