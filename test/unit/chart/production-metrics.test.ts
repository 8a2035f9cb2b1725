/**
 * Metrics wiring on the chart's side: a metrics Service for the controller and for HAProxy
 * (whose exporter is the default template's haptic_metrics frontend), scrapes admitted only
 * from the peers the NetworkPolicies name.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDir, findObject, helmBinaries, renderMode } from './chart-fixtures.ts';

const selector = (component: string) => ({
  'app.kubernetes.io/name': 'haptic',
  'app.kubernetes.io/instance': 'haptic',
  'app.kubernetes.io/component': component,
});

const monitoring = {
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
};

describe.each(helmBinaries)('metrics Services rendered by %s', (binary) => {
  it.each([
    ['haptic-controller-metrics', 'controller', 9090],
    ['haptic-haproxy-metrics', 'loadbalancer', 8404],
  ] as const)('serves %s on the Pods’ metrics port', async (name, component, port) => {
    const service = findObject(await renderMode(binary, {}), 'Service', name);
    expect(service.metadata.labels['app.kubernetes.io/component']).toBe('metrics');
    expect(service.body.spec).toEqual({
      type: 'ClusterIP',
      selector: selector(component),
      ports: [{ name: 'metrics', port, targetPort: 'metrics', protocol: 'TCP' }],
    });
  });

  it('takes annotations and can be turned off', async () => {
    const annotations = { 'prometheus.io/scrape': 'true' };
    const objects = await renderMode(binary, {
      controller: { metrics: { service: { enabled: false } } },
      haproxy: { metrics: { service: { annotations } } },
    });
    expect(objects.some((o) => o.metadata.name === 'haptic-controller-metrics')).toBe(false);
    expect(findObject(objects, 'Service', 'haptic-haproxy-metrics').metadata.annotations).toEqual(
      annotations,
    );
  });

  it("opens HAProxy's metrics port to metricsFrom only", async () => {
    const rules = async (values: Record<string, unknown>) =>
      (
        findObject(await renderMode(binary, values), 'NetworkPolicy', 'haptic-haproxy').body
          .spec as { ingress: { ports: { port: unknown }[] }[] }
      ).ingress;
    const closed = await rules({});
    expect(closed.flatMap((rule) => rule.ports.map((p) => p.port))).not.toContain('metrics');
    const open = await rules({ haproxy: { networkPolicy: { metricsFrom: [monitoring] } } });
    expect(open).toContainEqual({
      ports: [{ port: 'metrics', protocol: 'TCP' }],
      from: [monitoring],
    });
  });
});

describe("the default template's exporter", () => {
  it('binds :8404 and answers /metrics with the Prometheus exporter', () => {
    const template = readFileSync(
      join(chartDir, 'files/default-template/haproxy.cfg.liquid'),
      'utf8',
    );
    expect(template).toContain(
      [
        'frontend haptic_metrics',
        '  bind "${HAPTIC_LISTEN_ADDRESS}:8404"',
        '  http-request set-log-level silent',
        '  http-request use-service prometheus-exporter if { path /metrics }',
      ].join('\n'),
    );
  });
});
