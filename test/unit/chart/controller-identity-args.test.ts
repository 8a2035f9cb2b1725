import { describe, expect, it } from 'vitest';
import { trueOrFalse } from '../../../src/cli/option-parsers.ts';
import { loadEmbeddedChart, releaseIdentities } from '../../../src/webhook/index.ts';
import { chartModeNames, chartModes, findObject, renderMode } from './chart-fixtures.ts';

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
}

/** The `--flag=value` arguments of the controller container, as a map. */
async function controllerArgs(
  values: Readonly<Record<string, unknown>>,
): Promise<Map<string, string>> {
  const deployment = findObject(
    await renderMode('helm', values),
    'Deployment',
    'haptic-controller',
  ).body;
  const spec = deployment.spec as { template: { spec: { containers: readonly Container[] } } };
  const controller = spec.template.spec.containers.find((c) => c.name === 'controller');
  return new Map(
    (controller?.args ?? [])
      .map((arg) => /^--([a-z-]+)=(.*)$/.exec(arg))
      .flatMap((match) => (match === null ? [] : [[match[1] ?? '', match[2] ?? ''] as const])),
  );
}

describe("the controller's webhook guards exactly the release's identities", () => {
  const chart = loadEmbeddedChart();

  it.each(chartModeNames)('in %s mode the chart passes what the values give', async (mode) => {
    const args = await controllerArgs(chartModes[mode]);
    expect(args.get('release')).toBe('haptic');
    const derived = releaseIdentities('haptic', 'haptic', chart, [chartModes[mode]]);
    if (derived === undefined) {
      // Legacy Basic authentication: no identities, so no identity flags.
      expect([...args.keys()].filter((k) => /secret$|name$|^provider$/.test(k))).toEqual([]);
      return;
    }
    const passed = releaseIdentities('haptic', 'haptic', chart, [], {
      provider: args.get('provider') as typeof derived.provider,
      ...(args.has('issuer-secret') ? { issuerSecret: args.get('issuer-secret') ?? '' } : {}),
      serverSecret: args.get('server-secret') ?? '',
      clientSecret: args.get('client-secret') ?? '',
      serverName: args.get('server-name') ?? '',
      clientName: args.get('client-name') ?? '',
    });
    expect(passed).toEqual(derived);
  });
});

describe("the controller's --fqdn-endpoints follows controller.fqdnEndpoints", () => {
  it.each([
    ['by default', {}, true],
    ['when set to false', { controller: { fqdnEndpoints: false } }, false],
    ['when set to true', { controller: { fqdnEndpoints: true } }, true],
  ])('%s haptic run reads what the value says', async (_, values, expected) => {
    const args = await controllerArgs(values);
    expect(trueOrFalse(args.get('fqdn-endpoints') ?? '')).toBe(expected);
  });
});
