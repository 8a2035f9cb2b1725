/**
 * What served Ingresses show as ADDRESS: the chart points the controller at the release's
 * haproxy Service by default, and passes controller.publishStatusAddress instead when set; the
 * controller's own parser accepts what the values schema lets through for the usual forms.
 */
import { describe, expect, it } from 'vitest';
import { parseStatusAddresses } from '../../../src/controller/status/ingress-status.ts';
import { findObject, renderMode, runHelm, writeValuesFile, chartDir } from './chart-fixtures.ts';

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
}

async function publishArgs(values: Readonly<Record<string, unknown>>): Promise<string[]> {
  const deployment = findObject(
    await renderMode('helm', values),
    'Deployment',
    'haptic-controller',
  ).body;
  const spec = deployment.spec as { template: { spec: { containers: readonly Container[] } } };
  const controller = spec.template.spec.containers.find((c) => c.name === 'controller');
  return (controller?.args ?? []).filter((arg) => arg.startsWith('--publish-'));
}

describe('the address the controller publishes in Ingress status', () => {
  it("is the release's haproxy Service by default", async () => {
    expect(await publishArgs({})).toEqual(['--publish-service=haptic/haptic-haproxy']);
  });

  it('is controller.publishStatusAddress when set, which the controller reads', async () => {
    const args = await publishArgs({
      controller: { publishStatusAddress: '203.0.113.10,2001:db8::1,lb.example.com' },
    });
    expect(args).toEqual(['--publish-status-address=203.0.113.10,2001:db8::1,lb.example.com']);
    expect(parseStatusAddresses(args[0]?.split('=')[1] ?? '')).toEqual([
      { ip: '203.0.113.10' },
      { ip: '2001:db8::1' },
      { hostname: 'lb.example.com' },
    ]);
  });

  it.each(['LB.example.com', 'a, b', 'a;b'])(
    'refuses controller.publishStatusAddress %j at install, naming the value',
    async (address) => {
      const result = await runHelm('helm', [
        ...['template', 'haptic', chartDir, '-n', 'haptic'],
        ...['-f', writeValuesFile({ controller: { publishStatusAddress: address } })],
      ]);
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain("at '/controller/publishStatusAddress'");
    },
  );
});
