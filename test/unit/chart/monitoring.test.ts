/**
 * The chart's optional monitoring objects: a ServiceMonitor that selects both metrics Services,
 * a PrometheusRule and a Grafana dashboard whose every query parses as PromQL (Prometheus' own
 * parser) and names only metrics that exist: haptic_* ones docs/operations.md lists (the
 * controller-metrics integration test holds the controller to that list), HAProxy's from the
 * exporter of the real HAProxy 3.0, scraped here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { isRecord } from '../../../src/is-record.ts';
import { chartDir, findObject, helmBinaries, renderMode } from './chart-fixtures.ts';

const enabled = {
  monitoring: {
    serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
    prometheusRule: { enabled: true },
    grafanaDashboard: { enabled: true },
  },
};

/** The metric names a PromQL expression selects; throws when it does not parse. */
function selectedMetrics(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(node.from);
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier');
        if (identifier !== null) names.push(expr.slice(identifier.from, identifier.to));
      }
    },
  });
  if (errors.length > 0) throw new Error(`PromQL does not parse at ${String(errors[0])}: ${expr}`);
  return names;
}

/** The haptic_* metrics docs/operations.md lists (a trailing * is a prefix). */
function documentedMetrics(): string[] {
  const page = readFileSync(join(projectRoot, 'docs/operations.md'), 'utf8');
  return [...page.matchAll(/^\| `(haptic_[a-z_]+)/gm)].map((match) => match[1] ?? '');
}

/** Names a histogram's series carry besides its own. */
const histogramSeries = (name: string) => name.replace(/_(bucket|count|sum)$/, '');

let exporterMetrics: ReadonlySet<string> = new Set();
let dir: string;
let haproxy: ChildProcess | undefined;

beforeAll(async () => {
  // The real HAProxy's exporter, scraped once: the names the dashboard may use.
  dir = mkdtempSync(join(tmpdir(), 'monitoring-'));
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
  writeFileSync(
    join(dir, 'haproxy.cfg'),
    [
      'defaults',
      '  mode http',
      '  timeout client 5s',
      '  timeout server 5s',
      '  timeout connect 5s',
      'frontend metrics',
      `  bind 127.0.0.1:${String(port)}`,
      '  http-request use-service prometheus-exporter',
      'backend web',
      '  server s1 127.0.0.1:9',
      '',
    ].join('\n'),
  );
  haproxy = spawn('haproxy', ['-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
  let text = '';
  for (let attempt = 0; attempt < 50 && text === ''; attempt += 1) {
    text = await fetch(`http://127.0.0.1:${String(port)}/metrics`)
      .then((response) => response.text())
      .catch(
        () =>
          new Promise<string>((resolve) =>
            setTimeout(() => {
              resolve('');
            }, 100),
          ),
      );
  }
  exporterMetrics = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] ?? ''));
}, 30_000);

afterAll(() => {
  haproxy?.kill();
  rmSync(dir, { recursive: true, force: true });
});

function expectKnown(metrics: readonly string[]): void {
  const documented = documentedMetrics();
  for (const metric of metrics) {
    if (metric.startsWith('haptic_')) {
      expect(documented, metric).toContain(histogramSeries(metric));
    } else if (metric.startsWith('haproxy_')) {
      expect([...exporterMetrics], metric).toContain(metric);
    } else {
      // kube-state-metrics, the one outside source the renewal alert needs.
      expect(metric).toBe('kube_job_status_failed');
    }
  }
}

describe.each(helmBinaries)('monitoring objects rendered by %s', (binary) => {
  it('renders none by default', async () => {
    const objects = await renderMode(binary, {});
    expect(objects.filter((o) => ['ServiceMonitor', 'PrometheusRule'].includes(o.kind))).toEqual(
      [],
    );
    expect(objects.some((o) => o.metadata.name === 'haptic-dashboard')).toBe(false);
  });

  it('selects both metrics Services, on their metrics port, with the labels asked for', async () => {
    const objects = await renderMode(binary, enabled);
    const monitor = findObject(objects, 'ServiceMonitor', 'haptic');
    expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
    const spec = monitor.body.spec as {
      selector: { matchLabels: Record<string, string> };
      namespaceSelector: unknown;
      endpoints: { port: string }[];
    };
    const selected = objects.filter(
      (o) =>
        o.kind === 'Service' &&
        Object.entries(spec.selector.matchLabels).every(([k, v]) => o.metadata.labels[k] === v),
    );
    expect(selected.map((o) => o.metadata.name).sort()).toEqual([
      'haptic-controller-metrics',
      'haptic-haproxy-metrics',
    ]);
    for (const service of selected) {
      const ports = (service.body.spec as { ports: { name: string }[] }).ports;
      expect(ports.map((p) => p.name)).toContain(spec.endpoints[0]?.port);
    }
    expect(spec.namespaceSelector).toEqual({ matchNames: ['haptic'] });
  });

  it('alerts on delivery, check, leader, certificate and renewal failures in PromQL that parses', async () => {
    const rule = findObject(await renderMode(binary, enabled), 'PrometheusRule', 'haptic');
    const rules = (rule.body.spec as { groups: { rules: { alert: string; expr: string }[] }[] })
      .groups[0]?.rules;
    expect(rules?.map((r) => r.alert)).toEqual([
      'HapticDeliveryFailing',
      'HapticConfigCheckFailing',
      'HapticNoLeader',
      'HapticCertificateExpiring',
      'HapticRenewalJobFailed',
    ]);
    for (const { expr } of rules ?? []) {
      expectKnown(selectedMetrics(expr));
      expect(expr).toContain('namespace="haptic"');
    }
    expect(rules?.[3]?.expr).toContain('< 1209600');
  });

  it('ships the dashboard in a ConfigMap for the Grafana sidecar', async () => {
    const map = findObject(await renderMode(binary, enabled), 'ConfigMap', 'haptic-dashboard');
    expect(map.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const json = (map.body.data as Record<string, string>)['haptic.json'] ?? '';
    expect(JSON.parse(json)).toEqual(
      JSON.parse(readFileSync(join(chartDir, 'files/grafana-dashboard.json'), 'utf8')),
    );
  });
});

describe('the Grafana dashboard', () => {
  it('queries only metrics that exist, in PromQL that parses', () => {
    const dashboard: unknown = JSON.parse(
      readFileSync(join(chartDir, 'files/grafana-dashboard.json'), 'utf8'),
    );
    expect(exporterMetrics.size).toBeGreaterThan(50);
    const panels = isRecord(dashboard) && Array.isArray(dashboard.panels) ? dashboard.panels : [];
    expect(panels.length).toBeGreaterThan(10);
    const exprs = panels.flatMap((panel: unknown) =>
      isRecord(panel) && Array.isArray(panel.targets)
        ? panel.targets.map((target: unknown) => (isRecord(target) ? String(target.expr) : ''))
        : [],
    );
    // Grafana replaces $__rate_interval with a duration before Prometheus sees the query.
    const metrics = exprs.flatMap((expr) =>
      selectedMetrics(expr.replaceAll('$__rate_interval', '1m')),
    );
    expectKnown(metrics);
    expect(metrics).toEqual(
      expect.arrayContaining(['haptic_deliveries_total', 'haproxy_frontend_http_requests_total']),
    );
  });
});
