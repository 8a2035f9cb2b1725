import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

/** The exit code and output of one command run in a container. */
export interface ContainerResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** What of the OCI runtime configuration the tests read and change. */
interface RuntimeSpec {
  process: { args: string[]; terminal: boolean; user: { uid: number; gid: number } };
  root: { path: string; readonly: boolean };
  mounts: { destination: string; type: string; source: string; options?: string[] }[];
  linux: { namespaces: { type: string; path?: string }[] };
}

let runs = 0;

/**
 * A runtime bundle unpacked from the image (`umoci unpack`: rootfs/ and config.json, the
 * process, user and environment of the image's config). Each run gets its own container
 * (config.json with other args, the shared rootfs) and runc removes it afterwards.
 */
export class RuncBundle {
  readonly spec: RuntimeSpec;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    this.spec = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as RuntimeSpec;
  }

  get rootfs(): string {
    return join(this.dir, this.spec.root.path);
  }

  /** Runs `args` in a new container of the image, as the image's user, without a terminal. */
  async run(
    args: readonly string[],
    options: { writableRoot?: boolean } = {},
  ): Promise<ContainerResult> {
    runs += 1;
    const id = `haptic-image-test-${process.pid}-${runs}`;
    const bundle = mkdtempSync(join(this.dir, 'run-'));
    const spec: RuntimeSpec = {
      ...this.spec,
      process: { ...this.spec.process, args: [...args], terminal: false },
      root: { path: this.rootfs, readonly: options.writableRoot !== true },
    };
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
    try {
      const result = await execa('runc', ['run', '--bundle', bundle, id], {
        reject: false,
        stdin: 'ignore',
        timeout: 60_000,
      });
      if (result.timedOut) throw new Error(`runc run ${args.join(' ')} did not end in 60 s`);
      return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
    } finally {
      await execa('runc', ['delete', '--force', id], { reject: false });
      rmSync(bundle, { recursive: true, force: true });
    }
  }
}
