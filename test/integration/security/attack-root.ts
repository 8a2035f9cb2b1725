/**
 * The directory the configuration attacks name, `/tmp/<unique>`, made to exist wherever a
 * payload could run, so that a payload that ran could not fail for want of a path: on the host
 * (the plain `haproxy -c` controls) and in every emptyDir volume mounted at /tmp in a container
 * of the release's Pods (their roots are read-only; /tmp is where a container can write). Each
 * copy holds `markers/` (mode 0777: any container's user may create a marker there) and
 * `outside/` (the files the attacks read, readable by all). A Lua payload that ran anywhere
 * leaves its marker in one of the copies, and {@link AttackRoot.ran} looks in all of them.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import type { LocalSite, SitePod } from '../controller/local-site.ts';
import { kubectl } from '../../support/cluster.ts';
import { outsideFiles, slug } from '../../support/config-attacks.ts';

/** A container of a Pod of the site and the emptyDir volume it has at /tmp, if any. */
export interface TmpMount {
  readonly pod: SitePod;
  readonly container: string;
  /** The emptyDir volume mounted at /tmp; undefined when the container has none. */
  readonly volume: string | undefined;
}

interface PodSpec {
  readonly spec: {
    readonly containers: readonly Container[];
    readonly initContainers?: readonly Container[];
    readonly volumes?: readonly { readonly name: string; readonly emptyDir?: object }[];
  };
}

interface Container {
  readonly name: string;
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string }[];
}

/** Every container of `pod` (sidecars too) and the emptyDir volume it mounts at /tmp. */
async function tmpMountsOf(site: LocalSite, pod: SitePod): Promise<TmpMount[]> {
  const result = await kubectl(['get', 'pod', pod.name, '-n', site.namespace, '-o', 'json']);
  if (result.exitCode !== 0) throw new Error(result.stderr);
  const { spec } = JSON.parse(result.stdout) as PodSpec;
  const emptyDirs = new Set(
    (spec.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name),
  );
  return [...(spec.initContainers ?? []), ...spec.containers].map((container) => {
    const mount = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
    return {
      pod,
      container: container.name,
      volume: mount !== undefined && emptyDirs.has(mount.name) ? mount.name : undefined,
    };
  });
}

/** Makes `markers/` and `outside/` in `dir` (which exists). */
function plant(dir: string): void {
  chmodSync(dir, 0o755);
  const markers = join(dir, 'markers');
  mkdirSync(markers);
  chmodSync(markers, 0o777);
  const outside = join(dir, 'outside');
  mkdirSync(outside, { mode: 0o755 });
  for (const [name, content] of Object.entries(outsideFiles())) {
    writeFileSync(join(outside, name), content, { mode: 0o644 });
  }
}

export class AttackRoot {
  /** The root, the same path on the host and inside every container. */
  readonly path: string;
  /** Where the attacks find the files they read (outside every configuration directory). */
  readonly outside: string;
  /** The containers of the site's Pods and their /tmp volumes, once {@link plantInPods} ran. */
  mounts: readonly TmpMount[] = [];
  /** Host directories of every copy's `markers/`: the host's own first. */
  private readonly markerDirs: string[];
  /** Host directories of the copies in Pod volumes, by `<pod uid>/<volume>`. */
  private readonly podCopies = new Map<string, string>();

  constructor() {
    // Under /tmp itself (not $TMPDIR): the containers see the same path under their /tmp.
    this.path = mkdtempSync('/tmp/haptic-doors-');
    plant(this.path);
    this.outside = join(this.path, 'outside');
    this.markerDirs = [join(this.path, 'markers')];
  }

  /** Makes the root in every emptyDir mounted at /tmp in a container of `pods`. */
  async plantInPods(site: LocalSite, pods: readonly SitePod[]): Promise<void> {
    this.mounts = (await Promise.all(pods.map((pod) => tmpMountsOf(site, pod)))).flat();
    for (const { pod, volume } of this.mounts) {
      const key = `${pod.uid}/${volume ?? ''}`;
      if (volume === undefined || this.podCopies.has(key)) continue;
      const copy = join(site.emptyDir(pod, volume), basename(this.path));
      mkdirSync(copy);
      plant(copy);
      this.podCopies.set(key, copy);
      this.markerDirs.push(join(copy, 'markers'));
    }
  }

  /** The host directory of the copy a container sees as the root. */
  copyOf(mount: TmpMount): string | undefined {
    return this.podCopies.get(`${mount.pod.uid}/${mount.volume ?? ''}`);
  }

  /** The marker file a payload for `door` and attack `name` creates (its in-container path). */
  marker(door: string, name: string): string {
    return join(this.path, 'markers', `${door}-${slug(name)}`);
  }

  /** The host paths where that marker exists: on the host or in any Pod's copy. */
  found(door: string, name: string): string[] {
    const file = basename(this.marker(door, name));
    return this.markerDirs.map((dir) => join(dir, file)).filter((path) => existsSync(path));
  }

  ran(door: string, name: string): boolean {
    return this.found(door, name).length > 0;
  }

  /** The markers in each copy, the host's first. */
  written(): { readonly dir: string; readonly names: string[] }[] {
    return this.markerDirs.map((dir) => ({ dir, names: readdirSync(dir) }));
  }

  /** Removes the host's root (the Pods' copies go with their volumes). */
  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}
