/**
 * A minimal OCI image archive (image layout in a tar: oci-layout, index.json, blobs) with one
 * uncompressed layer, built from files of this machine. Reproducible: the same files give the
 * same digests (sorted entries, fixed times and owners). `ctr images import` takes it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

export type ImageEntry =
  | { readonly path: string; readonly source: string }
  | { readonly path: string; readonly symlink: string }
  | { readonly path: string; readonly directory: true };

export interface ImageSpec {
  /** Full reference, e.g. `haptic.local/busybox:static`. */
  readonly name: string;
  readonly entries: readonly ImageEntry[];
  readonly entrypoint: readonly string[];
  readonly cmd?: readonly string[];
}

const reproducibleTar = [
  '--sort=name',
  '--mtime=@0',
  '--owner=0',
  '--group=0',
  '--numeric-owner',
  '--format=posix',
  '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
];

interface Blob {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

function writeBlob(layout: string, mediaType: string, bytes: Buffer): Blob {
  const hex = createHash('sha256').update(bytes).digest('hex');
  writeFileSync(join(layout, 'blobs', 'sha256', hex), bytes);
  return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
}

/** Writes the image as an OCI archive at `archive`; returns the manifest digest. */
export function buildOciArchive(spec: ImageSpec, archive: string): string {
  const work = mkdtempSync(join(dirname(archive), '.oci-'));
  try {
    const rootfs = join(work, 'rootfs');
    const layout = join(work, 'layout');
    mkdirSync(rootfs);
    mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
    for (const entry of spec.entries) {
      const target = join(rootfs, entry.path);
      if ('directory' in entry) {
        mkdirSync(target, { recursive: true });
        continue;
      }
      mkdirSync(dirname(target), { recursive: true });
      if ('symlink' in entry) symlinkSync(entry.symlink, target);
      else copyFileSync(entry.source, target);
    }
    const layerTar = join(work, 'layer.tar');
    execFileSync('tar', [...reproducibleTar, '-C', rootfs, '-cf', layerTar, '.']);
    const layer = writeBlob(
      layout,
      'application/vnd.oci.image.layer.v1.tar',
      readFileSync(layerTar),
    );
    const config = writeBlob(
      layout,
      'application/vnd.oci.image.config.v1+json',
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          config: {
            Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
            Entrypoint: spec.entrypoint,
            ...(spec.cmd === undefined ? {} : { Cmd: spec.cmd }),
          },
          rootfs: { type: 'layers', diff_ids: [layer.digest] },
        }),
      ),
    );
    const manifest = writeBlob(
      layout,
      'application/vnd.oci.image.manifest.v1+json',
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          config,
          layers: [layer],
        }),
      ),
    );
    const tag = spec.name.slice(spec.name.lastIndexOf(':') + 1);
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(
      join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            ...manifest,
            platform: { architecture: 'amd64', os: 'linux' },
            annotations: {
              'io.containerd.image.name': spec.name,
              'org.opencontainers.image.ref.name': tag,
            },
          },
        ],
      }),
    );
    execFileSync('tar', [...reproducibleTar, '-C', layout, '-cf', archive, '.']);
    return manifest.digest;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
