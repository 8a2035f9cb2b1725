import { describe, expect, it } from 'vitest';
import {
  chartDefaults,
  chartSchema,
  defaultMarker,
  now,
  secret,
  valuesOf,
} from '../../test/unit/validation/material.ts';
import { HapticError, errorCodes } from '../errors.ts';
import type { LiveState } from './live-rules.ts';
import type { RenderedObjectView } from './render-rules.ts';
import { type LiveReads, type ReleaseIo, validateRelease } from './validate-release.ts';
import { compileValuesSchema } from './values-schema.ts';

const chart = {
  version: '1.2.3',
  defaults: chartDefaults(),
  schema: compileValuesSchema(chartSchema()),
};

/** The Deployments as the chart's defaults render them: their agent-tls and webhook-tls mounts. */
const rendered: RenderedObjectView[] = [
  'controller:haptic-agent-client-tls:haptic-webhook-default-tls',
  'haproxy:haptic-agent-server-tls',
].map((entry) => {
  const [component = '', secretName = '', webhook] = entry.split(':');
  const volumes = [{ name: 'agent-tls', secret: { secretName } }];
  if (webhook !== undefined) volumes.push({ name: 'webhook-tls', secret: { secretName: webhook } });
  return {
    kind: 'Deployment',
    metadata: { name: `haptic-${component}` },
    body: { spec: { template: { spec: { volumes } } } },
  };
});

interface Trace {
  rendered: number;
  reads: LiveReads[];
}

function io(
  trace: Trace,
  live?: LiveState,
  render?: () => Promise<RenderedObjectView[]>,
): ReleaseIo {
  return {
    render: () => {
      trace.rendered += 1;
      return render === undefined ? Promise.resolve(rendered) : render();
    },
    ...(live === undefined
      ? {}
      : {
          readLive: (reads: LiveReads) => {
            trace.reads.push(reads);
            return Promise.resolve(live);
          },
        }),
  };
}

const empty: LiveState = { secrets: new Map(), mounted: {} };

async function run(
  flat: Record<string, unknown>,
  options: {
    expected?: string;
    live?: LiveState;
    render?: () => Promise<RenderedObjectView[]>;
  } = {},
) {
  const trace: Trace = { rendered: 0, reads: [] };
  const verdict = await validateRelease(
    {
      release: 'haptic',
      namespace: 'haptic',
      values: valuesOf(flat),
      chart,
      expectedChartVersion: options.expected ?? '1.2.3',
      now,
    },
    io(trace, options.live, options.render),
  );
  return { verdict, trace, codes: verdict.findings.map((f) => f.code) };
}

describe('validateRelease', () => {
  it('accepts the defaults after reading the plan’s Secrets and Deployments', async () => {
    const { verdict, trace } = await run({}, { live: empty });
    expect(verdict).toEqual({ allowed: true, findings: [] });
    expect(trace.reads).toEqual([
      {
        namespace: 'haptic',
        secrets: [
          'haptic-agent-server-tls',
          'haptic-agent-client-tls',
          'haptic-webhook-default-tls',
        ],
        metadataOnly: ['haptic-agent-ca'],
        deployments: { server: 'haptic-haproxy', client: 'haptic-controller' },
      },
    ]);
  });

  it('stops at the version guard', async () => {
    const { verdict, trace } = await run({ a: 1 }, { expected: '9.9.9', live: empty });
    expect(verdict.allowed).toBe(false);
    expect(verdict.findings.map((f) => f.code)).toEqual(['ChartVersionMismatch']);
    expect(trace.rendered).toBe(0);
  });

  it('stops at the schema before reading the cluster', async () => {
    const { codes, trace } = await run({ 'haproxy.agent.tls.foo': 1 }, { live: empty });
    expect(codes).toEqual(['ValuesSchemaViolation']);
    expect(trace.reads).toEqual([]);
  });

  it('stops at the value rules before reading the cluster', async () => {
    const { codes, trace } = await run({ 'haproxy.agent.tls.managed': false }, { live: empty });
    expect(codes).toEqual(['ExternalSecretNameMissing', 'ExternalSecretNameMissing']);
    expect(trace.reads).toEqual([]);
  });

  it('turns helm’s rejection of the values into a finding', async () => {
    const { codes } = await run(
      {},
      {
        live: empty,
        render: () => Promise.reject(new HapticError(errorCodes.RENDER_VALUES_INVALID, 'no.')),
      },
    );
    expect(codes).toEqual(['ChartRenderRejected']);
  });

  it('lets environment failures of rendering through as errors', async () => {
    await expect(
      run({}, { render: () => Promise.reject(new HapticError(errorCodes.TOOL_FAILED, 'no helm')) }),
    ).rejects.toThrow('no helm');
  });

  it('rejects live takeovers', async () => {
    const live: LiveState = {
      secrets: new Map([
        ['haptic-agent-ca', secret('haptic-agent-ca', {}, { labels: defaultMarker })],
      ]),
      mounted: {},
    };
    const { codes } = await run({ 'haproxy.agent.tls.certManager.enabled': true }, { live });
    expect(codes).toEqual(['ProviderTakeover']);
  });

  it('says that live checks were skipped offline', async () => {
    const { verdict } = await run({});
    expect(verdict.allowed).toBe(true);
    expect(verdict.findings.map((f) => [f.severity, f.code])).toEqual([
      ['warning', 'LiveChecksSkipped'],
    ]);
  });
});
