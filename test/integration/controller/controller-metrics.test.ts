/**
 * The controller's :9090/metrics after real reconciles, admission reviews and deliveries, on
 * the chart's release: every metric the table of docs/operations.md lists is there with the
 * values that work produced, and no process metric carries a doubled prefix.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { kubectl } from '../../support/cluster.ts';
import { LocalSite, eventually } from './local-site.ts';

let site: LocalSite;
let startedAt: number;
let text: string;

function route(host: string, path: string) {
  return {
    host,
    http: {
      paths: [
        { path, pathType: 'Prefix', backend: { service: { name: 'alpha', port: { number: 80 } } } },
      ],
    },
  };
}

async function scrape(): Promise<string> {
  const controller = site.controllers[0];
  if (controller === undefined) throw new Error('no controller');
  return (await fetch(`http://${controller.address}:9090/metrics`)).text();
}

/** Every sample of `series` (a metric name with `{labels}` as exposed), summed; 0 when absent. */
function value(metrics: string, series: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${series} `))
    .reduce((sum, line) => sum + Number(line.slice(series.length + 1)), 0);
}

/** Sum of every sample of `name` whose labels contain `labels` (e.g. `kind="Ingress"`). */
function total(metrics: string, name: string, labels = ''): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** The metric names in the metrics table of docs/operations.md (`haptic_x_*` for a family). */
function documentedMetrics(): string[] {
  const page = readFileSync(join(projectRoot, 'docs/operations.md'), 'utf8');
  const rows = page.split('\n').filter((line) => line.startsWith('| `haptic_'));
  return rows.flatMap((row) =>
    [...(row.split('|')[1] ?? '').matchAll(/`(haptic_[a-z_]+\*?)/g)].map((match) => match[1] ?? ''),
  );
}

beforeAll(async () => {
  site = await LocalSite.start('ctl-metrics', { webhook: true });
  await site.addBackend('alpha');
  startedAt = Date.now() / 1000;
  // The API server picks the webhook registration up asynchronously: write until it calls.
  const ingress = site.ingress('shop', [route('shop.example.com', '/')]);
  await eventually(
    'the webhook reviews an Ingress',
    async () => {
      await site.apply(ingress);
      return scrape();
    },
    (metrics) => total(metrics, 'haptic_webhook_requests_total', 'kind="Ingress"') > 0,
    60_000,
  );
  const hostile = site.ingress('broken', [route('broken.example.com', '/')]);
  const metadata = hostile.metadata as Record<string, unknown>;
  metadata.annotations = { 'haproxy-haptic.org/timeout': '5s\nlua-load /tmp/x.lua' };
  // The webhook denies it; created with the webhook out of the way it would be left out.
  const denied = await kubectl(['apply', '-f', '-'], JSON.stringify(hostile));
  expect(denied.stderr).toContain('denied');
  await eventually(
    'served on both replicas',
    () => site.everywhere('shop.example.com', '/', ['http']),
    (answers) => answers.length === 2 && answers.every((answer) => answer === '200 alpha /'),
  );
  // The agents serve the Ingress a moment before the controller has their answer and stamps it.
  text = await eventually(
    'the delivery that served the Ingress recorded',
    scrape,
    (metrics) => value(metrics, 'haptic_config_last_success_timestamp_seconds') >= startedAt,
  );
}, 240_000);

afterAll(async () => {
  await site.stop();
});

describe('the controller metrics after a real reconcile', () => {
  it('exposes every metric docs/operations.md lists', () => {
    const listed = documentedMetrics();
    expect(listed).toContain('haptic_config_last_success_timestamp_seconds');
    // A sample, or the TYPE line of a labelled metric with no series yet (a previous-CA
    // deadline exists only during a rotation).
    const names = new Set(
      text.split('\n').map((line) => /^(?:# TYPE )?(haptic_[a-z_]+)/.exec(line)?.[1] ?? ''),
    );
    const missing = listed.filter((metric) =>
      metric.endsWith('*')
        ? ![...names].some((name) => name.startsWith(metric.slice(0, -1)))
        : ![metric, `${metric}_count`].some((name) => names.has(name)),
    );
    expect(missing).toEqual([]);
  });

  it('counts the reconciles, renders, checks and deliveries that served the Ingress', () => {
    expect(value(text, 'haptic_reconciles_total{result="delivered"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'haptic_render_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'haptic_check_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    for (const replica of site.replicas) {
      expect(
        total(text, 'haptic_deliveries_total', `agent="${replica.name}",result="applied"`),
      ).toBeGreaterThanOrEqual(1);
    }
    expect(value(text, 'haptic_ingresses{state="served"}')).toBe(1);
    expect(value(text, 'haptic_ingresses{state="excluded"}')).toBe(0);
    expect(value(text, 'haptic_leader')).toBe(1);
  });

  it('counts and times the admission reviews, allowed and denied', () => {
    expect(
      value(text, 'haptic_webhook_requests_total{kind="Ingress",verdict="allowed"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'haptic_webhook_requests_total{kind="Ingress",verdict="denied"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      value(text, 'haptic_webhook_duration_seconds_count{kind="Ingress"}'),
    ).toBeGreaterThanOrEqual(2);
  });

  it('stamps the last successful delivery with the time it happened', async () => {
    const stamp = value(text, 'haptic_config_last_success_timestamp_seconds');
    expect(stamp).toBeLessThanOrEqual(Date.now() / 1000);
    // A later change delivered moves it on.
    await site.apply(
      site.ingress('shop', [route('shop.example.com', '/'), route('more.example.com', '/')]),
    );
    await eventually(
      'a later delivery',
      scrape,
      (metrics) => value(metrics, 'haptic_config_last_success_timestamp_seconds') > stamp,
    );
  });

  it("names process and Node.js metrics as Prometheus' Node.js exporters do, and its build", async () => {
    expect(value(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).not.toMatch(/^haptic_(process|nodejs)_/m);
    const version = (
      await site.exec(site.controllers[0]?.name ?? '', 'controller', ['haptic', '--version'])
    ).trim();
    const haproxy = /HAProxy version (\S+)/.exec(
      await site.exec(site.controllers[0]?.name ?? '', 'controller', ['haproxy', '-v']),
    )?.[1];
    expect(text).toMatch(
      new RegExp(
        `^haptic_build_info\\{version="${version.replace(/[.+]/g, '\\$&')}",haproxy_version="${(haproxy ?? 'none').replace(/[.+]/g, '\\$&')}",nodejs_version="v24\\.[0-9.]+"\\} 1$`,
        'm',
      ),
    );
    expect(haproxy).toMatch(/^3\.0\./);
    // Our Unix times end in _timestamp_seconds, and none of our gauges ends in _total
    // (prom-client's own nodejs_active_resources_total is not ours to rename).
    for (const [, name = '', type] of text.matchAll(/^# TYPE (haptic_\S+) (\S+)$/gm)) {
      if (type === 'gauge') expect(name).not.toMatch(/_total$/);
    }
    expect(text).not.toMatch(/^haptic_\w*(not_after|until)_seconds/m);
  });
});
