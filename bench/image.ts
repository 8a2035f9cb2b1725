/**
 * make image: reproducibility, size and build time, and the Docker path's equivalence.
 *
 * 1. cold: image/build.sh with empty private .deb and npm caches; 2. warm: again with them.
 *    Both archives must be byte-identical (same SOURCE_DATE_EPOCH, same snapshot of the tree).
 * 3. docker-like: the Dockerfile's build-stage steps (dev/install-node.sh, dev/install-tools.sh
 *    helm, npm ci, image/assemble.sh) in a copy of the build context without .dockerignore's
 *    entries, without CAP_SYS_ADMIN as in `docker build`; its stacked layers must equal the
 *    archive's unpacked root file system (contents, owners, modes, links).
 * Needs root, the package registries and `make setup`. Exit 1 when a comparison fails.
 *
 *   node bench/image.ts
 */
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { readChartImage } from '../dev/lib/chart-image.ts';
import { projectRoot } from '../dev/lib/tools.ts';
import { fileDigest } from '../test/integration/image/oci-archive.ts';

const work = mkdtempSync(join(tmpdir(), 'bench-image-'));
const { stdout: epoch } = await execa('git', ['log', '-1', '--format=%ct'], { cwd: projectRoot });
const { tag } = readChartImage();
const ignored = readFileSync(join(projectRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'));

/** A copy of the working tree without .dockerignore's entries (Docker's build context). */
async function context(dir: string): Promise<void> {
  mkdirSync(dir);
  const excludes = ignored.map((pattern) => `--exclude=./${pattern}`);
  await execa('bash', [
    '-c',
    `tar -C "$0" -c ${excludes.map((e) => `'${e}'`).join(' ')} . | tar -C "$1" -x`,
    projectRoot,
    dir,
  ]);
}

async function timed(label: string, run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  const seconds = (performance.now() - start) / 1000;
  process.stdout.write(`${label}: ${seconds.toFixed(0)} s\n`);
  return seconds;
}

/** `find` listing of a tree: path, owner, group, mode, link target; sorted. */
async function listing(dir: string): Promise<string> {
  const { stdout } = await execa('bash', [
    '-c',
    'cd "$0" && find . -printf "%p %U %G %m %l\\n" | LC_ALL=C sort',
    dir,
  ]);
  return stdout;
}

let failed = false;
try {
  // One snapshot for both builds, so edits to the tree meanwhile change neither.
  const snapshot = join(work, 'snapshot');
  await context(snapshot);
  const docker = join(work, 'docker-context');
  await execa('cp', ['-a', snapshot, docker]);
  symlinkSync(join(projectRoot, 'node_modules'), join(snapshot, 'node_modules'));
  symlinkSync(join(projectRoot, '.tools'), join(snapshot, '.tools'));
  const caches = {
    SOURCE_DATE_EPOCH: epoch,
    HAPTIC_TOOLS_CACHE: join(work, 'tools-cache'),
    npm_config_cache: join(work, 'npm-cache'),
  };
  const archives = [join(work, 'cold.oci.tar'), join(work, 'warm.oci.tar')];
  for (const [i, archive] of archives.entries()) {
    await timed(i === 0 ? 'build, cold caches' : 'build, warm caches', () =>
      execa(join(snapshot, 'image/build.sh'), [archive], { env: caches, stdio: 'inherit' }),
    );
  }
  const [cold, warm] = await Promise.all(archives.map((archive) => fileDigest(archive)));
  process.stdout.write(
    `archive: ${(statSync(archives[0] ?? '').size / 1e6).toFixed(1)} MB; sha256 cold ${cold}, warm ${warm}\n`,
  );
  if (cold !== warm) {
    failed = true;
    process.stdout.write('NOT REPRODUCIBLE: the two builds differ\n');
  }

  // The Docker path: the build stage's steps in a clean copy of the same snapshot, without
  // CAP_SYS_ADMIN.
  const layers = join(work, 'docker-layers');
  await timed('docker-like build stage (no CAP_SYS_ADMIN)', () =>
    execa(
      'setpriv',
      [
        '--bounding-set=-sys_admin',
        'bash',
        '-c',
        `dev/install-node.sh && dev/install-tools.sh helm haptic-no-network && npm ci --no-audit --no-fund && image/assemble.sh "$0"`,
        layers,
      ],
      {
        cwd: docker,
        env: {
          SOURCE_DATE_EPOCH: epoch,
          PATH: `${docker}/.tools/bin:${docker}/node_modules/.bin:${process.env.PATH ?? ''}`,
        },
        stdio: 'inherit',
      },
    ),
  );
  const stacked = join(work, 'docker-rootfs');
  mkdirSync(stacked);
  // Stacked as Docker's three COPY --from instructions stack them.
  await execa('bash', [
    '-c',
    'for layer in base runtime app; do cp -a "$0/$layer/." "$1"; done',
    layers,
    stacked,
  ]);
  const layout = join(work, 'layout');
  mkdirSync(layout);
  await execa('tar', ['-xf', archives[0] ?? '', '-C', layout]);
  await execa(join(projectRoot, '.tools/bin/umoci'), [
    'unpack',
    '--image',
    `${layout}:${tag}`,
    join(work, 'bundle'),
  ]);
  const rootfs = join(work, 'bundle/rootfs');
  const contents = await execa('diff', ['-r', '--no-dereference', rootfs, stacked], {
    reject: false,
  });
  const [imageListing, dockerListing] = await Promise.all([listing(rootfs), listing(stacked)]);
  if (contents.exitCode !== 0 || imageListing !== dockerListing) {
    failed = true;
    writeFileSync(join(work, 'image.listing'), imageListing);
    writeFileSync(join(work, 'docker.listing'), dockerListing);
    const listed = await execa(
      'diff',
      [join(work, 'image.listing'), join(work, 'docker.listing')],
      {
        reject: false,
      },
    );
    process.stdout.write(
      `DOCKER PATH DIFFERS:\n${contents.stdout.slice(0, 4000)}\n${listed.stdout.slice(0, 4000)}\n`,
    );
  } else {
    process.stdout.write('docker-like layers equal the archive (contents, owners, modes, links)\n');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
