import { beforeAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { embeddedChartDir, renderChart } from '../../../src/render/index.ts';
import { createTestNamespace, helm, kubectl } from '../../support/cluster.ts';
import { type ChartMode, chartModes, writeValuesFile } from '../../unit/chart/chart-fixtures.ts';
import { certManagerCrds, certManagerModule } from './cert-manager-crds.ts';

const modes: readonly ChartMode[] = [
  'cert-manager',
  'cert-manager existing issuer',
  'cert-manager switch',
  'gitops cert-manager',
];

describe(`cert-manager mode against cert-manager ${certManagerModule.version}'s CRDs`, () => {
  beforeAll(async () => {
    const applied = await kubectl(
      ['apply', '--server-side', '--field-manager=chart-test', '-f', '-'],
      await certManagerCrds(),
    );
    expect(applied.stderr).toBe('');
    const established = await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/certificates.cert-manager.io',
      'crd/issuers.cert-manager.io',
      'crd/clusterissuers.cert-manager.io',
    ]);
    expect({ exitCode: established.exitCode, stderr: established.stderr }).toEqual({
      exitCode: 0,
      stderr: '',
    });
  });

  it.each(modes)('renders objects the API server accepts in %s mode', async (mode) => {
    const ns = await createTestNamespace('chart-cm');
    const { objects } = await renderChart({
      helmBin: toolPath('helm'),
      namespace: ns,
      values: chartModes[mode],
      includeCrds: true,
    });
    expect(objects.some((o) => o.apiVersion === 'cert-manager.io/v1')).toBe(true);
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: objects.map((o) => o.body),
    });
    const result = await kubectl(
      [
        'apply',
        '--dry-run=server',
        '--server-side',
        '--force-conflicts',
        '--field-manager=chart-test',
        '--validate=strict',
        '-f',
        '-',
      ],
      list,
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it.each(['helm', 'helm4'] as const)('passes %s install --dry-run=server', async (binary) => {
    const ns = await createTestNamespace(`chart-cm-${binary}`);
    const values = writeValuesFile(chartModes['gitops cert-manager']);
    const install = await helm(
      [
        'install',
        'haptic',
        embeddedChartDir(),
        '-n',
        ns,
        '--dry-run=server',
        '--values',
        values,
        '--set',
        'haproxy.agent.tls.certManager.enabled=true',
        '--set',
        `ingressClass.name=${ns}`,
      ],
      binary,
    );
    // helm4 warns that dry runs of charts with CRDs may be inaccurate; nothing else.
    expect(
      install.stderr.replace(/^level=WARN msg="This chart .* contains CRDs\..*"\n?/m, ''),
    ).toBe('');
    expect(install.exitCode).toBe(0);
    expect(install.stdout).toContain('kind: Certificate');
  });
});
