/**
 * Measures the kubelet's Secret projection delays on the node: the time from a Secret's change,
 * as a watch on the API server sees it, to the same data in a Pod's volume. In each Pod a shell
 * started by `kubectl exec` (as the spec's wait_projected reads the files) follows the
 * `..data` link every 100 ms and prints the files' SHA-256 sums when it moves; the test
 * timestamps the line on arrival. (The Secret volumes are tmpfs mounts of the kubelet, which
 * the host does not see.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { startWatchLoop } from '../../../dev/lib/watch-loop.ts';
import { toolPath } from '../../../dev/lib/tools.ts';

export interface ProjectionTarget {
  readonly secret: string;
  readonly pod: string;
  /** A container that mounts the Secret at /etc/haptic/agent-tls. */
  readonly container: string;
}

export interface ProjectionDelay {
  readonly secret: string;
  readonly pod: string;
  readonly resourceVersion: string;
  /** From the watch's event to the data in the Pod's volume. */
  readonly ms: number;
}

interface Revision {
  readonly secret: string;
  readonly resourceVersion: string;
  readonly fingerprint: string;
  /** When the watch saw it; undefined for what the first list found. */
  readonly seenAt: number | undefined;
}

/**
 * Follows the projection for at most 15 minutes (the shell outlives a closed `kubectl exec`
 * until it next prints, so it also ends by itself).
 */
const followScript = String.raw`
last=
i=0
while [ "$i" -lt 9000 ]; do
  if cd -P /etc/haptic/agent-tls/..data 2>/dev/null && [ "$PWD" != "$last" ]; then
    last=$PWD
    echo $(sha256sum -- *)
  fi
  i=$((i + 1))
  sleep 0.1
done
`;

/** One digest over file names and their SHA-256 sums, for a Secret's data and a projection. */
function fingerprint(sums: readonly (readonly [string, string])[]): string {
  const hash = createHash('sha256');
  for (const [key, sum] of [...sums].sort(([a], [b]) => (a < b ? -1 : 1))) {
    hash.update(`${key}\0${sum}\0`);
  }
  return hash.digest('hex');
}

function secretFingerprint(secret: V1Secret): string {
  return fingerprint(
    Object.entries(secret.data ?? {}).map(([key, value]) => [
      key,
      createHash('sha256').update(Buffer.from(value, 'base64')).digest('hex'),
    ]),
  );
}

/** `sha256sum` output joined on one line: `<sum> <file> <sum> <file> ...`. */
function projectedFingerprint(line: string): string {
  const words = line.trim().split(/\s+/);
  const sums: [string, string][] = [];
  for (let i = 0; i + 1 < words.length; i += 2) sums.push([words[i + 1] ?? '', words[i] ?? '']);
  return fingerprint(sums);
}

export class ProjectionObserver {
  readonly #revisions: Revision[] = [];
  readonly #delays: ProjectionDelay[] = [];
  readonly #followers: ChildProcess[] = [];
  #stopWatch: () => Promise<void> = () => Promise.resolve();

  static async start(
    kc: KubeConfig,
    namespace: string,
    targets: readonly ProjectionTarget[],
  ): Promise<ProjectionObserver> {
    const observer = new ProjectionObserver();
    await observer.#watch(kc, namespace, new Set(targets.map((target) => target.secret)));
    await Promise.all(targets.map((target) => observer.#follow(namespace, target)));
    return observer;
  }

  /** Every (Secret revision, Pod) pair projected so far, in the order they arrived. */
  delays(): readonly ProjectionDelay[] {
    return this.#delays;
  }

  async stop(): Promise<void> {
    for (const follower of this.#followers) follower.kill();
    await this.#stopWatch();
  }

  async #watch(kc: KubeConfig, namespace: string, names: ReadonlySet<string>): Promise<void> {
    const core = kc.makeApiClient(CoreV1Api);
    const record = (secret: V1Secret, seenAt: number | undefined): void => {
      const name = secret.metadata?.name ?? '';
      const resourceVersion = secret.metadata?.resourceVersion ?? '';
      if (!names.has(name)) return;
      if (this.#revisions.some((r) => r.resourceVersion === resourceVersion)) return;
      this.#revisions.push({
        secret: name,
        resourceVersion,
        fingerprint: secretFingerprint(secret),
        seenAt,
      });
    };
    let listed = false;
    let first: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (first = resolve));
    const watch = startWatchLoop<V1Secret>(kc, {
      path: `/api/v1/namespaces/${namespace}/secrets`,
      relist: async () => {
        const list = await core.listNamespacedSecret({ namespace });
        const at = listed ? Date.now() : undefined;
        for (const secret of list.items) record(secret, at);
        listed = true;
        first();
        return list.metadata?.resourceVersion;
      },
      onEvent: (phase, secret) => {
        if (phase === 'ADDED' || phase === 'MODIFIED') record(secret, Date.now());
      },
    });
    this.#stopWatch = () => watch.stop();
    await ready;
  }

  /** Resolves once the Pod reported what it holds now. */
  #follow(namespace: string, target: ProjectionTarget): Promise<void> {
    const follower = spawn(
      toolPath('kubectl'),
      [
        ...['exec', '-n', namespace, target.pod, '-c', target.container],
        ...['--', 'sh', '-c', followScript],
      ],
      {
        env: { ...process.env, KUBECONFIG: inject('kubeconfig') },
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    this.#followers.push(follower);
    return new Promise((resolve, reject) => {
      let initial = true;
      follower.on('error', reject);
      follower.on('exit', (code) => {
        if (initial) reject(new Error(`following ${target.pod}: kubectl exited ${String(code)}`));
      });
      createInterface({ input: follower.stdout }).on('line', (line) => {
        const now = Date.now();
        if (initial) {
          initial = false;
          resolve();
          return;
        }
        const projected = projectedFingerprint(line);
        const revision = this.#revisions.findLast(
          (r) => r.secret === target.secret && r.fingerprint === projected,
        );
        if (revision?.seenAt === undefined) return;
        this.#delays.push({
          secret: target.secret,
          pod: target.pod,
          resourceVersion: revision.resourceVersion,
          ms: now - revision.seenAt,
        });
      });
    });
  }
}
