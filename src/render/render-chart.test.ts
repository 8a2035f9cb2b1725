import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../dev/lib/tools.ts';
import { HapticError, errorCodes } from '../errors.ts';
import { documentsOfKind } from './manifest.ts';
import { startRender } from './helm-run.ts';
import { renderChart } from './render-chart.ts';

async function renderError(promise: Promise<unknown>): Promise<HapticError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HapticError) return error;
    throw error;
  }
  throw new Error('expected renderChart to fail');
}

function tempFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'render-test-')), name);
  writeFileSync(path, content);
  return path;
}

function valuesFile(content: string): string {
  return tempFile('values.yaml', content);
}

describe.each(['helm', 'helm4'] as const)('renderChart with %s', (binary) => {
  const helmBin = toolPath(binary);

  it('renders the embedded chart into typed objects, hooks included', async () => {
    const { objects } = await renderChart({ helmBin });
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toContain('Deployment/haptic-controller');
    expect(names).toContain('Deployment/haptic-haproxy');
    expect(names).toContain('CronJob/haptic-agent-renewal');
    expect(names).toContain('Job/haptic-haptic-pre-rollout');
    const job = objects.find((o) => o.metadata.name === 'haptic-haptic-pre-rollout');
    expect(job?.hook?.events).toEqual(['pre-install', 'pre-upgrade']);
    expect(job?.source).toBe('haptic/templates/pre-rollout-job.yaml');
  });

  it('gives byte-identical output for the same inputs', async () => {
    const options = { helmBin, release: 'edge', namespace: 'ingress' };
    const [first, second] = await Promise.all([renderChart(options), renderChart(options)]);
    expect(second.manifest).toBe(first.manifest);
    expect(second.objects).toEqual(first.objects);
  });

  it('uses the release name and namespace', async () => {
    const { objects } = await renderChart({ helmBin, release: 'edge', namespace: 'ingress' });
    const controller = objects.find((o) => o.kind === 'Deployment');
    expect(controller?.metadata).toMatchObject({
      name: 'edge-haptic-controller',
      namespace: 'ingress',
    });
    expect(objects.some((o) => o.metadata.name === 'edge-haptic-pre-rollout')).toBe(true);
  });

  it('applies values files in order, then inline values', async () => {
    const first = valuesFile('controller:\n  replicas: 3\nhaproxy:\n  replicas: 4\n');
    const second = valuesFile('controller:\n  replicas: 5\n');
    const { objects } = await renderChart({
      helmBin,
      valuesFiles: [first, second],
      values: { haproxy: { replicas: 6 } },
    });
    const replicas = objects
      .filter((o) => o.kind === 'Deployment')
      .map((o) => [o.metadata.name, (o.body.spec as { replicas: number }).replicas]);
    expect(replicas).toEqual([
      ['haptic-controller', 5],
      ['haptic-haproxy', 6],
    ]);
  });

  it('renders crds/ only when asked', async () => {
    const without = await renderChart({ helmBin });
    const withCrds = await renderChart({ helmBin, includeCrds: true });
    const crd = (objects: typeof without.objects) =>
      objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name);
    expect(crd(without.objects)).toEqual([]);
    expect(crd(withCrds.objects)).toEqual(['haproxytemplateconfigs.haproxy-haptic.org']);
  });

  it("rejects unknown keys with helm's schema message", async () => {
    const error = await renderError(renderChart({ helmBin, values: { controler: {} } }));
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toContain("additional properties 'controler' not allowed");
  });

  it('reports every chart value rule at once', async () => {
    const error = await renderError(
      renderChart({ helmBin, values: { haproxy: { agent: { tls: { managed: false } } } } }),
    );
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toBe(
      [
        'invalid values for release "haptic":',
        '- haproxy.agent.tls.serverSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the agent identity (tls.crt, tls.key, ca.crt).',
        '- haproxy.agent.tls.clientSecretName is required when haproxy.agent.tls.managed is false: name the Secret that holds the controller identity (tls.crt, tls.key, ca.crt).',
      ].join('\n'),
    );
  });

  it('rejects an unparseable values file as invalid values', async () => {
    const error = await renderError(renderChart({ helmBin, valuesFiles: [valuesFile('a: [\n')] }));
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toMatch(/^helm rejected the values of release "haptic": failed to parse/);
  });

  it('reports a missing chart as RENDER_FAILED', async () => {
    const error = await renderError(renderChart({ helmBin, chartDir: '/nonexistent/chart' }));
    expect(error.code).toBe(errorCodes.RENDER_FAILED);
    expect(error.message).toBe(
      'helm template failed for release "haptic": path "/nonexistent/chart" not found',
    );
  });
});

describe('renderChart without a usable helm', () => {
  it('names an unreadable values file before running helm', async () => {
    const error = await renderError(
      renderChart({ helmBin: '/nonexistent/helm', valuesFiles: ['/nonexistent/values.yaml'] }),
    );
    expect(error.code).toBe(errorCodes.USAGE_INVALID);
    expect(error.message).toMatch(/^values file \/nonexistent\/values\.yaml cannot be read/);
  });

  it('says how to fix a missing helm binary', async () => {
    const error = await renderError(renderChart({ helmBin: '/nonexistent/helm' }));
    expect(error.code).toBe(errorCodes.TOOL_FAILED);
    expect(error.message).toMatch(
      /^\/nonexistent\/helm could not run \(.*ENOENT.*\); install helm or set HELM_BIN to its path\.$/s,
    );
  });

  it('stops a helm that takes too long', async () => {
    const slow = tempFile('slow-helm', '#!/bin/sh\nexec sleep 5\n');
    chmodSync(slow, 0o755);
    const error = await renderError(renderChart({ helmBin: slow, timeoutMs: 200 }));
    expect(error.code).toBe(errorCodes.TOOL_FAILED);
    expect(error.message).toBe(
      `${slow} template did not finish within 200 ms; check the helm binary.`,
    );
  });

  it('says when helm was killed by a signal', async () => {
    const killed = tempFile('killed-helm', '#!/bin/sh\nkill -9 $$\n');
    chmodSync(killed, 0o755);
    const error = await renderError(renderChart({ helmBin: killed, values: { a: 1 } }));
    expect(error.code).toBe(errorCodes.TOOL_FAILED);
    expect(error.message).toBe(
      `${killed} could not run (killed by SIGKILL); install helm or set HELM_BIN to its path.`,
    );
  });

  it('uses HELM_BIN when no binary is given', async () => {
    const saved = process.env.HELM_BIN;
    process.env.HELM_BIN = '/nonexistent/helm-from-env';
    try {
      const error = await renderError(renderChart());
      expect(error.message).toMatch(/^\/nonexistent\/helm-from-env could not run/);
    } finally {
      if (saved === undefined) delete process.env.HELM_BIN;
      else process.env.HELM_BIN = saved;
    }
  });
});

describe.each(['helm', 'helm4'] as const)('startRender with %s', (binary) => {
  const helmBin = toolPath(binary);
  const options = { helmBin, release: 'edge', namespace: 'ingress' };

  it('starts helm before its values and gives the bytes renderChart gives for them', async () => {
    const pending = startRender(options);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const values = { controller: { replicas: 3 } };
    const [early, whole] = await Promise.all([
      pending.output(values),
      renderChart({ ...options, values }),
    ]);
    expect(early).toBe(whole.manifest);
    expect(early).toMatch(/^ {2}replicas: 3$/m);
    // Preflight's lint starts on the config parsed from its own document, and counts only if
    // it equals the whole parse's: for the embedded chart it does.
    const configs = documentsOfKind(early, 'HAProxyTemplateConfig');
    expect(configs).toHaveLength(1);
    expect(configs).toEqual(whole.objects.filter((o) => o.kind === 'HAProxyTemplateConfig'));
  });

  it('counts its time limit from the values, not from its start', async () => {
    const pending = startRender({ ...options, timeoutMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await pending.output({})).toContain('kind: Deployment');
  });

  it("rejects values as renderChart does, with helm's message", async () => {
    const error = await renderError(startRender(options).output({ unknownKey: true }));
    expect(error.code).toBe(errorCodes.RENDER_VALUES_INVALID);
    expect(error.message).toContain("additional properties 'unknownKey' not allowed");
  });
});

describe('startRender', () => {
  it('stops the waiting helm when its values will not come', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'render-test-')), 'pid');
    const waiting = tempFile(
      'waiting-helm',
      `#!/bin/sh\necho $$ > ${pidFile}\nexec cat >/dev/null\n`,
    );
    chmodSync(waiting, 0o755);
    const pending = startRender({ helmBin: waiting });
    await expect
      .poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'))
      .toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(isRunning(pid)).toBe(true);
    pending.abandon();
    await expect.poll(() => isRunning(pid)).toBe(false);
  });

  it('says how to fix a missing helm binary once the values come', async () => {
    const error = await renderError(startRender({ helmBin: '/nonexistent/helm' }).output({}));
    expect(error.code).toBe(errorCodes.TOOL_FAILED);
    expect(error.message).toMatch(/^\/nonexistent\/helm could not run \(.*ENOENT/);
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("helm's Go runtime", () => {
  const envHelm = tempFile(
    'env-helm',
    '#!/bin/sh\ncat >/dev/null\nprintf -- \'---\\n# Source: env.yaml\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: env\\ndata:\\n  GOGC: "%s"\\n  GOMEMLIMIT: "%s"\\n  GOMAXPROCS: "%s"\\n\' "$GOGC" "$GOMEMLIMIT" "$GOMAXPROCS"\n',
  );
  chmodSync(envHelm, 0o755);
  const runtimeOf = async () => (await renderChart({ helmBin: envHelm })).objects[0]?.body.data;

  it('runs helm without garbage collection below 48 MiB, on one thread', async () => {
    const keys = ['GOGC', 'GOMEMLIMIT', 'GOMAXPROCS'] as const;
    const saved = keys.map((key) => process.env[key]);
    delete process.env.GOGC;
    delete process.env.GOMEMLIMIT;
    delete process.env.GOMAXPROCS;
    try {
      expect(await runtimeOf()).toEqual({ GOGC: 'off', GOMEMLIMIT: '48MiB', GOMAXPROCS: '1' });
    } finally {
      keys.forEach((key, index) => {
        const value = saved[index];
        if (value !== undefined) process.env[key] = value;
      });
    }
  });

  it('leaves all three to an environment that sets one of them', async () => {
    const saved = process.env.GOMEMLIMIT;
    process.env.GOMEMLIMIT = '1GiB';
    try {
      expect(await runtimeOf()).toEqual({
        GOGC: process.env.GOGC ?? '',
        GOMEMLIMIT: '1GiB',
        GOMAXPROCS: process.env.GOMAXPROCS ?? '',
      });
    } finally {
      if (saved === undefined) delete process.env.GOMEMLIMIT;
      else process.env.GOMEMLIMIT = saved;
    }
  });
});
