/**
 * The chart's check sandbox: in both Pods that parse rendered configuration, a config-check
 * container that holds nothing worth stealing, and the caller pointed at its socket.
 */
import { describe, expect, it } from 'vitest';
import { chartModeNames, chartModes, findObject, renderMode } from './chart-fixtures.ts';

interface Mount {
  readonly name: string;
  readonly mountPath: string;
}

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
  readonly env?: readonly unknown[];
  readonly envFrom?: readonly unknown[];
  readonly volumeMounts?: readonly Mount[];
  readonly resources?: unknown;
  readonly restartPolicy?: string;
  readonly securityContext?: {
    readonly runAsUser?: number;
    readonly runAsGroup?: number;
    readonly readOnlyRootFilesystem?: boolean;
    readonly runAsNonRoot?: boolean;
  };
}

interface Volume {
  readonly name: string;
  readonly secret?: unknown;
  readonly emptyDir?: unknown;
  readonly projected?: { readonly sources: readonly Record<string, unknown>[] };
}

interface PodSpec {
  readonly automountServiceAccountToken?: boolean;
  readonly enableServiceLinks?: boolean;
  readonly securityContext?: { readonly runAsUser?: number };
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes: readonly Volume[];
}

function podSpec(objects: Awaited<ReturnType<typeof renderMode>>, name: string): PodSpec {
  const body = findObject(objects, 'Deployment', name).body as {
    spec: { template: { spec: PodSpec } };
  };
  return body.spec.template.spec;
}

function container(spec: PodSpec, name: string): Container {
  const found = [...(spec.initContainers ?? []), ...spec.containers].find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container ${name}`);
  return found;
}

function flag(c: Container, name: string): string | undefined {
  return c.args?.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const pods = [
  ['haptic-controller', 'controller'],
  ['haptic-haproxy', 'agent'],
] as const;

describe('the config-check sandbox of the chart', () => {
  it.each(chartModeNames)(
    'in %s mode sits beside the controller and the agent with nothing to steal',
    async (mode) => {
      const objects = await renderMode('helm', chartModes[mode]);
      for (const [deployment, caller] of pods) {
        const spec = podSpec(objects, deployment);
        const sandbox = container(spec, 'config-check');
        // A native sidecar: it answers before the container that calls it starts.
        expect(sandbox.restartPolicy).toBe('Always');
        expect(sandbox.args?.slice(0, 2)).toEqual(['sandbox', 'serve']);
        // Its own user: neither the Pod's (controller 65532, HAProxy 99) nor root.
        expect(sandbox.securityContext).toMatchObject({
          runAsUser: 65534,
          runAsGroup: 65534,
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
        });
        expect(sandbox.securityContext?.runAsUser).not.toBe(spec.securityContext?.runAsUser);
        // No environment, no token, no Secret: only its socket and its own scratch space.
        expect(sandbox.env).toBeUndefined();
        expect(sandbox.envFrom).toBeUndefined();
        expect(spec.enableServiceLinks).toBe(false);
        expect(spec.automountServiceAccountToken).toBe(false);
        expect(sandbox.volumeMounts).toEqual([
          { name: 'check-socket', mountPath: '/run/haptic-check' },
          { name: 'check-tmp', mountPath: '/tmp' },
        ]);
        for (const name of ['check-socket', 'check-tmp']) {
          expect(spec.volumes.find((v) => v.name === name)?.emptyDir).toBeDefined();
        }
        expect(sandbox.resources).toEqual({
          requests: { cpu: '50m', memory: '96Mi' },
          limits: { cpu: '1', memory: '1280Mi' },
        });
        // The caller reaches it through the shared socket directory.
        const user = container(spec, caller);
        expect(flag(user, 'check-socket')).toBe(flag(sandbox, 'socket'));
        expect(user.volumeMounts).toContainEqual({
          name: 'check-socket',
          mountPath: '/run/haptic-check',
        });
      }
    },
  );

  it('gives the ServiceAccount token to the controller container alone', async () => {
    const spec = podSpec(await renderMode('helm', chartModes.default), 'haptic-controller');
    const tokenVolumes = spec.volumes.filter((volume) =>
      (volume.projected?.sources ?? []).some((source) => 'serviceAccountToken' in source),
    );
    expect(tokenVolumes.map((volume) => volume.name)).toEqual(['kube-api-access']);
    const mounting = [...(spec.initContainers ?? []), ...spec.containers]
      .filter((c) => (c.volumeMounts ?? []).some((m) => m.name === 'kube-api-access'))
      .map((c) => c.name);
    expect(mounting).toEqual(['controller']);
    expect(container(spec, 'controller').volumeMounts).toContainEqual({
      name: 'kube-api-access',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    });
  });

  it('takes the limits from the sandbox values', async () => {
    const objects = await renderMode('helm', {
      sandbox: { runAsUser: 40000, timeLimitSeconds: 5, memoryLimitMiB: 256, maxConcurrent: 1 },
    });
    const sandbox = container(podSpec(objects, 'haptic-controller'), 'config-check');
    expect(sandbox.args).toEqual([
      'sandbox',
      'serve',
      '--socket=/run/haptic-check/check.sock',
      '--time-limit=5',
      '--memory-limit=256',
      '--max-concurrent=1',
      '--network-isolation=seccomp',
    ]);
    expect(sandbox.securityContext).toMatchObject({ runAsUser: 40000, runAsGroup: 40000 });
  });

  it.each([0, 99, 65532])(
    'refuses sandbox.runAsUser %i (root or a user it must not share)',
    async (uid) => {
      await expect(renderMode('helm', { sandbox: { runAsUser: uid } })).rejects.toThrow(
        /sandbox\.runAsUser|sandbox\/runAsUser/,
      );
    },
  );
});
