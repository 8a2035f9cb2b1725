import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChartImage } from '../../../dev/lib/chart-image.ts';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import { declaredImage, readProjectDockerfile } from '../../support/dockerfile.ts';
import { type OciImage, readOciArchive } from './oci-archive.ts';
import { RuncBundle } from './runc-bundle.ts';

// `make image` builds the archive before the tests: it downloads from the package registries,
// which the egress-guarded test run must not. Reproducibility (two builds, one digest) is
// measured by bench/image.ts, which builds twice.
const chartImage = readChartImage();
const archive = join(projectRoot, `.image/haptic-${chartImage.tag}.oci.tar`);
const umoci = toolPath('umoci');
const pinnedNode = /^version=(\S+)$/m.exec(
  readFileSync(join(projectRoot, 'dev/install-node.sh'), 'utf8'),
)?.[1];
const pinnedHaproxy = readFileSync(
  join(projectRoot, 'tools/haproxy/debian-version'),
  'utf8',
).trim();

/**
 * Every path under `root` with its lstat, never following a symbolic link (the image has
 * absolute ones, such as /var/run -> /run, that would lead out of its root).
 */
function walk(root: string, relative = ''): { path: string; mode: number; mtimeMs: number }[] {
  return readdirSync(join(root, relative), { withFileTypes: true }).flatMap((entry) => {
    const path = `${relative}/${entry.name}`;
    const stat = lstatSync(join(root, path));
    const self = { path, mode: stat.mode, mtimeMs: stat.mtimeMs };
    return entry.isDirectory() ? [self, ...walk(root, path)] : [self];
  });
}

describe('the haptic image (make image)', () => {
  const declared = declaredImage(readProjectDockerfile());
  let dir = '';
  let image: OciImage;
  let bundle: RuncBundle;

  beforeAll(async () => {
    if (!existsSync(archive)) {
      throw new Error(
        `${archive} is missing; run \`make image\` first (it needs the package registries, so it runs before the tests).`,
      );
    }
    if (!existsSync(umoci)) throw new Error(`${umoci} is missing; run dev/install-tools.sh umoci`);
    dir = mkdtempSync(join(tmpdir(), 'haptic-image-'));
    mkdirSync(join(dir, 'layout'));
    image = await readOciArchive(archive, join(dir, 'layout'));
    await execa(umoci, [
      'unpack',
      '--image',
      `${join(dir, 'layout')}:${chartImage.tag}`,
      join(dir, 'bundle'),
    ]);
    bundle = new RuncBundle(join(dir, 'bundle'));
  }, 300_000);

  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it("is one OCI image, tagged with the appVersion and named as the chart's default image", () => {
    expect(image.indexEntry.mediaType).toBe('application/vnd.oci.image.manifest.v1+json');
    expect(image.indexEntry.annotations).toEqual({
      'org.opencontainers.image.ref.name': chartImage.tag,
      'io.containerd.image.name': chartImage.reference,
    });
    expect(image.manifest.config.mediaType).toBe('application/vnd.oci.image.config.v1+json');
    expect(image.manifest.layers.map((layer) => layer.mediaType)).toEqual(
      Array(3).fill('application/vnd.oci.image.layer.v1.tar+gzip'),
    );
    expect([image.config.os, image.config.architecture]).toEqual(['linux', 'amd64']);
  });

  it('has the configuration the Dockerfile declares: user 65532, entry point /usr/local/bin/haptic', () => {
    const { config } = image.config;
    expect(config.User).toBe('65532:65532');
    expect(config.Entrypoint).toEqual(['/usr/local/bin/haptic']);
    expect(config.Cmd).toBeUndefined();
    expect({
      user: config.User,
      entrypoint: config.Entrypoint,
      env: config.Env,
      workingDir: config.WorkingDir,
    }).toEqual({
      user: declared.user,
      entrypoint: declared.entrypoint,
      env: declared.env,
      workingDir: declared.workingDir,
    });
    // The version label needs the chart's appVersion, which a Dockerfile cannot read.
    expect(config.Labels).toEqual({
      ...declared.labels,
      'org.opencontainers.image.version': chartImage.tag,
    });
  });

  it('stacks the layers the Dockerfile copies, in its order, all created at SOURCE_DATE_EPOCH', () => {
    const { created, history } = image.config;
    expect(history.map((entry) => entry.created_by)).toEqual(
      declared.copiedLayers.map((layer) => `image/assemble.sh (${basename(layer.source)})`),
    );
    expect(new Set([...history.map((entry) => entry.created), created])).toEqual(
      new Set([created]),
    );
    const newest = Math.max(...walk(bundle.rootfs).map((entry) => entry.mtimeMs));
    expect(newest).toBeLessThanOrEqual(Date.parse(created));
  });

  it('has no setuid or setgid file, and only root owns the app', () => {
    const files = walk(bundle.rootfs);
    expect(
      files.filter((file) => (file.mode & 0o6000) !== 0 && (file.mode & 0o170000) === 0o100000),
    ).toEqual([]);
    const app = files.filter(
      (file) => file.path.startsWith('/usr/local/') && (file.mode & 0o170000) !== 0o120000,
    );
    expect(app.length).toBeGreaterThan(1000);
    for (const file of app) {
      const { uid, gid } = lstatSync(join(bundle.rootfs, file.path));
      expect([file.path, uid, gid, file.mode & 0o022]).toEqual([file.path, 0, 0, 0]);
    }
  });

  it('mounts nothing of this machine into its containers', () => {
    expect(
      bundle.spec.mounts.filter(
        (mount) => mount.type === 'bind' || mount.options?.includes('bind'),
      ),
    ).toEqual([]);
    expect(bundle.spec.linux.namespaces.map((ns) => ns.type)).toEqual(
      expect.arrayContaining(['mount', 'network', 'pid']),
    );
    expect(bundle.spec.linux.namespaces.filter((ns) => ns.path !== undefined)).toEqual([]);
  });

  it('runs `haptic version` through its entry point, with its own Node and node_modules', async () => {
    expect(pinnedNode).toMatch(/^24\./);
    expect(await bundle.run(['/usr/local/bin/haptic', 'version'])).toEqual({
      exitCode: 0,
      stdout: `haptic ${chartImage.tag}\nHAProxy ${pinnedHaproxy} (/usr/sbin/haproxy)\nNode.js v${pinnedNode ?? ''}`,
      stderr: '',
    });
    expect(await bundle.run(['/usr/local/bin/haptic', '--version'])).toMatchObject({
      stdout: chartImage.tag,
    });
    expect((await bundle.run(['sh', '-c', 'command -v node && node --version'])).stdout).toBe(
      `/usr/local/bin/node\nv${pinnedNode ?? ''}`,
    );
  });

  it('fails an unknown command through its entry point, naming it', async () => {
    const result = await bundle.run(['/usr/local/bin/haptic', 'no-such-command']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'no-such-command'");
  });

  it('runs as 65532, which cannot change the app even on a writable root', async () => {
    expect((await bundle.run(['id', '-u', '-n'])).stdout).toBe('nonroot');
    expect((await bundle.run(['sh', '-c', 'id -u; id -g'])).stdout).toBe('65532\n65532');
    const touch = await bundle.run(['touch', '/usr/local/lib/haptic/package.json'], {
      writableRoot: true,
    });
    expect(touch.exitCode).toBe(1);
    expect(touch.stderr).toContain('Permission denied');
  });

  it('runs the pinned HAProxy 3.0 build, the one the host checks with, and the pinned helm, which renders the embedded chart', async () => {
    expect(pinnedHaproxy).toMatch(/^3\.0\.\d+-\S*deb13/);
    const haproxy = await bundle.run(['haproxy', '-v']);
    const hostHaproxy = await execa('haproxy', ['-v']);
    expect(haproxy.stdout.split('\n')[0]).toBe(hostHaproxy.stdout.split('\n')[0]);
    expect(haproxy.stdout).toMatch(
      new RegExp(`^HAProxy version ${pinnedHaproxy.replace(/[.+]/g, '\\$&')} `),
    );
    const binary = await bundle.run(['sha256sum', '/usr/sbin/haproxy']);
    const pristine = await execa('sha256sum', [
      join(projectRoot, '.tools/haproxy/root/usr/sbin/haproxy'),
    ]);
    expect(binary.stdout.split(' ')[0]).toBe(pristine.stdout.split(' ')[0]);
    const hostHelm = await execa(toolPath('helm'), ['version', '--short']);
    expect((await bundle.run(['helm', 'version', '--short'])).stdout).toBe(hostHelm.stdout);
    const rendered = await bundle.run([
      'helm',
      'template',
      'haptic',
      '/usr/local/lib/haptic/chart',
      '--namespace',
      'haptic',
    ]);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    expect(rendered.stdout).toContain('name: haptic-controller');
    expect(rendered.stdout).toContain(`image: "${chartImage.reference}"`);
  });

  it("runs the guide's cat and test, and prlimit for the check sandbox", async () => {
    expect((await bundle.run(['cat', '/etc/os-release'])).stdout).toContain(
      'VERSION_CODENAME=trixie',
    );
    expect((await bundle.run(['test', '!', '-e', '/etc/haptic/none'])).exitCode).toBe(0);
    expect((await bundle.run(['test', '-e', '/etc/haptic/none'])).exitCode).toBe(1);
    expect((await bundle.run(['test', '-x', '/usr/local/bin/haptic'])).exitCode).toBe(0);
    expect((await bundle.run(['prlimit', '--as=1000000000', '--', 'true'])).exitCode).toBe(0);
  });
});

describe('the image scripts refuse bad input before any work', () => {
  const script = (name: string, args: readonly string[], env: Record<string, string>) =>
    execa(join(projectRoot, 'image', name), args, {
      reject: false,
      env,
      stdin: 'ignore',
    });

  it('build.sh refuses a SOURCE_DATE_EPOCH that is not a Unix time', async () => {
    const result = await script('build.sh', [], { SOURCE_DATE_EPOCH: 'yesterday' });
    expect([result.exitCode, result.stderr]).toEqual([
      2,
      "image/build.sh: SOURCE_DATE_EPOCH must be a Unix time in seconds (got 'yesterday')",
    ]);
  });

  it('assemble.sh refuses a missing SOURCE_DATE_EPOCH, an existing output and a missing sources file', async () => {
    const out = mkdtempSync(join(tmpdir(), 'assemble-'));
    try {
      const noEpoch = await script('assemble.sh', [join(out, 'new')], { SOURCE_DATE_EPOCH: '' });
      expect([noEpoch.exitCode, noEpoch.stderr]).toEqual([
        2,
        "image/assemble.sh: SOURCE_DATE_EPOCH must be a Unix time in seconds (got ''); set it, e.g. to $(git log -1 --format=%ct)",
      ]);
      const existing = await script('assemble.sh', [out], { SOURCE_DATE_EPOCH: '1' });
      expect([existing.exitCode, existing.stderr]).toEqual([
        2,
        `image/assemble.sh: ${out} exists; give a new directory`,
      ]);
      const sources = await script('assemble.sh', [join(out, 'new')], {
        SOURCE_DATE_EPOCH: '1',
        HAPTIC_DEBIAN_SOURCES: join(out, 'none.sources'),
      });
      expect([sources.exitCode, sources.stderr]).toEqual([
        2,
        `image/assemble.sh: apt sources file '${join(out, 'none.sources')}' is missing or empty; set HAPTIC_DEBIAN_SOURCES to a sources file naming a Debian trixie mirror`,
      ]);
      expect(existsSync(join(out, 'new'))).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
