/**
 * Preflight for a release name of the greatest length Helm accepts (53 characters), against the
 * shared node. The chart shortens such names and adds a hash (`haptic.suffixedName`); the
 * validator must check and read exactly the objects the chart renders. The expected names are
 * taken from the real `helm template`, not from the validator.
 */
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { type RenderedObject, renderChart } from '../../../src/render/index.ts';
import { mountedSecret } from '../../../src/validation/render-rules.ts';
import { readPackageVersion } from '../../../src/version.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { preflight, valuesFile } from './run-preflight.ts';

const version = readPackageVersion();
const release = `edge-${'x'.repeat(43)}-lb01`;

/** The rendered object of this kind and component. */
function component(objects: readonly RenderedObject[], kind: string, name: string): RenderedObject {
  const found = objects.find(
    (o) => o.kind === kind && o.metadata.labels['app.kubernetes.io/component'] === name,
  );
  if (found === undefined) throw new Error(`the chart rendered no ${kind} ${name}`);
  return found;
}

/** The identity Secrets the chart gives this release: issuer, server, client. */
async function renderedIdentitySecrets(namespace: string): Promise<string[]> {
  const { objects } = await renderChart({ helmBin: toolPath('helm'), release, namespace });
  const server = mountedSecret(component(objects, 'Deployment', 'loadbalancer'), 'agent-tls');
  const client = mountedSecret(component(objects, 'Deployment', 'controller'), 'agent-tls');
  const cronJob = objects.find((o) => o.kind === 'CronJob');
  const issuer = /"--issuer-secret=([^"]*)"/.exec(JSON.stringify(cronJob?.body ?? {}))?.[1];
  const names = [issuer, server, client].filter((name) => name !== undefined);
  expect(names).toHaveLength(3);
  return names;
}

/** `haptic preflight` for the long release in `namespace`, expecting the embedded chart. */
function preflightRelease(namespace: string, ...args: string[]) {
  return preflight([
    '-n',
    namespace,
    '--release',
    release,
    '--expect-chart-version',
    version,
    ...args,
  ]);
}

function defaultProviderSecret(namespace: string, name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { 'haptic.haproxy.org/certificate-provider': 'default' },
    },
    data: { 'tls.crt': '' },
  });
}

describe('haptic preflight for a 53-character release name', () => {
  it('accepts the first install (exit 0)', async () => {
    expect(release).toHaveLength(53);
    const ns = await createTestNamespace('preflight-long');
    const result = await preflightRelease(ns);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`preflight accepted release ${release} in namespace ${ns}.`);
    expect(result.exitCode).toBe(0);
  });

  it('reads the Secrets under the names the chart renders: a provider switch onto them is rejected', async () => {
    const ns = await createTestNamespace('preflight-long-switch');
    const secrets = await renderedIdentitySecrets(ns);
    for (const name of secrets) {
      expect(name.length).toBeLessThanOrEqual(63);
      expect((await kubectl(['apply', '-f', '-'], defaultProviderSecret(ns, name))).exitCode).toBe(
        0,
      );
    }
    const kept = await preflightRelease(ns);
    expect(kept.stdout).toBe(`preflight accepted release ${release} in namespace ${ns}.`);
    expect(kept.exitCode).toBe(0);

    const switched = valuesFile({
      haproxy: { agent: { tls: { certManager: { enabled: true } } } },
    });
    const rejected = await preflightRelease(ns, '-f', switched, '--output', 'json');
    const report = JSON.parse(rejected.stdout) as {
      findings: { code: string; path: string; message: string }[];
    };
    expect(report.findings.map((f) => f.code)).toEqual([
      'ProviderTakeover',
      'ProviderTakeover',
      'ProviderTakeover',
    ]);
    report.findings.forEach((finding, index) => {
      expect(finding.message).toContain(
        `names Secret ${ns}/${secrets[index] ?? ''}, which is managed by the default provider`,
      );
    });
    expect(rejected.exitCode).toBe(1);
  });
});
