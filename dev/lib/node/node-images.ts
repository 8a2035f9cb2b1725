/**
 * The images every node has without pulling anything: the Pod sandbox ("pause") image, from
 * Debian's static catatonit in its pause mode, and a small workload image, from Debian's
 * busybox-static (a shell, wget, nc, httpd), both built as OCI archives and imported into
 * containerd's `k8s.io` namespace, where the CRI plugin finds them.
 */
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOciArchive, type ImageEntry, type ImageSpec } from './oci-image.ts';

/** The sandbox image (containerd's `sandbox_image`). */
export const pauseImage = 'haptic.local/pause:catatonit';
/** A workload image for Pods in tests: `/bin/sh` and the busybox applets. */
export const busyboxImage = 'haptic.local/busybox:static';

export const catatonitBinary = '/usr/bin/catatonit';
export const busyboxBinary = '/bin/busybox';

const pauseSpec: ImageSpec = {
  name: pauseImage,
  entries: [{ path: 'pause', source: catatonitBinary }],
  entrypoint: ['/pause', '-P'],
};

function busyboxSpec(): ImageSpec {
  const applets = execFileSync(busyboxBinary, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((name) => /^[\w.[-]+$/.test(name) && name !== 'busybox');
  const links: ImageEntry[] = applets.map((name) => ({ path: `bin/${name}`, symlink: 'busybox' }));
  return {
    name: busyboxImage,
    entries: [
      { path: 'bin/busybox', source: busyboxBinary },
      ...links,
      ...['etc', 'tmp'].map((path) => ({ path, directory: true as const })),
    ],
    entrypoint: [],
    cmd: ['/bin/sh'],
  };
}

/** Builds both archives into `dir`; returns their paths. */
export function buildNodeImages(dir: string): string[] {
  return [
    { spec: pauseSpec, file: 'pause.tar' },
    { spec: busyboxSpec(), file: 'busybox.tar' },
  ].map(({ spec, file }) => {
    const archive = join(dir, file);
    buildOciArchive(spec, archive);
    return archive;
  });
}

/**
 * Imports an OCI archive into the node's containerd (unpacked for its snapshotter). An
 * archive that fails to import is named in the error, with containerd's reason.
 */
export async function importImage(socket: string, archive: string): Promise<void> {
  try {
    await promisify(execFile)(
      'ctr',
      ['--address', socket, '--namespace', 'k8s.io'].concat(['images', 'import', archive]),
    );
  } catch (error) {
    const reason =
      error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    throw new Error(
      `The image archive ${archive} did not import into the node's containerd: ${reason}`,
      {
        cause: error,
      },
    );
  }
}
