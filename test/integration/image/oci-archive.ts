import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { execa } from 'execa';

/** An OCI content descriptor (image-spec descriptor.md). */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The parts of an OCI image configuration the tests read (image-spec config.md). */
export interface ImageConfig {
  readonly created: string;
  readonly architecture: string;
  readonly os: string;
  readonly config: {
    readonly User?: string;
    readonly Entrypoint?: readonly string[];
    readonly Cmd?: readonly string[];
    readonly Env?: readonly string[];
    readonly WorkingDir?: string;
    readonly Labels?: Readonly<Record<string, string>>;
  };
  readonly rootfs: { readonly type: string; readonly diff_ids: readonly string[] };
  readonly history: readonly { readonly created?: string; readonly created_by?: string }[];
}

/** One image of an OCI image layout, every blob checked against its descriptor. */
export interface OciImage {
  readonly layoutDir: string;
  readonly indexEntry: Descriptor;
  readonly manifest: { readonly config: Descriptor; readonly layers: readonly Descriptor[] };
  readonly config: ImageConfig;
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${where} is not a JSON object`);
  }
  return Object.fromEntries(Object.entries(value));
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where} is not a string`);
  return value;
}

function list(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where} is not an array`);
  return value.map((item: unknown) => item);
}

function descriptor(value: unknown, where: string): Descriptor {
  const fields = record(value, where);
  const size = fields.size;
  if (typeof size !== 'number' || !Number.isInteger(size)) throw new Error(`${where}.size`);
  const annotations = Object.entries(record(fields.annotations ?? {}, `${where}.annotations`));
  return {
    mediaType: text(fields.mediaType, `${where}.mediaType`),
    digest: text(fields.digest, `${where}.digest`),
    size,
    annotations: Object.fromEntries(annotations.map(([k, v]) => [k, text(v, `${where}.${k}`)])),
  };
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function blobPath(layoutDir: string, digest: string): string {
  const match = /^sha256:([a-f0-9]{64})$/.exec(digest);
  if (match?.[1] === undefined) throw new Error(`${digest} is not a sha256 digest`);
  return join(layoutDir, 'blobs', 'sha256', match[1]);
}

/** sha256 of a file's bytes, or of its gunzipped bytes. */
export async function fileDigest(path: string, gunzip = false): Promise<string> {
  const hash = createHash('sha256');
  await (gunzip
    ? pipeline(createReadStream(path), createGunzip(), hash)
    : pipeline(createReadStream(path), hash));
  return `sha256:${hash.digest('hex')}`;
}

/** Checks a blob's size and digest against its descriptor; throws naming the blob. */
async function checkBlob(layoutDir: string, blob: Descriptor): Promise<string> {
  const path = blobPath(layoutDir, blob.digest);
  const size = statSync(path).size;
  if (size !== blob.size)
    throw new Error(`${blob.digest}: ${size} bytes, descriptor says ${blob.size}`);
  const actual = await fileDigest(path);
  if (actual !== blob.digest) throw new Error(`${blob.digest}: content digest is ${actual}`);
  return path;
}

/**
 * Extracts an OCI archive (a tar of an image layout) into `dir` and reads its one image,
 * checking the layout marker, every blob's size and digest, and each layer's diff_id.
 */
export async function readOciArchive(archive: string, dir: string): Promise<OciImage> {
  await execa('tar', ['-xf', archive, '-C', dir]);
  const marker = record(readJson(join(dir, 'oci-layout')), 'oci-layout');
  if (marker.imageLayoutVersion !== '1.0.0') throw new Error('oci-layout: imageLayoutVersion');
  const index = record(readJson(join(dir, 'index.json')), 'index.json');
  const entries = list(index.manifests, 'index.json manifests');
  if (entries.length !== 1) throw new Error(`index.json has ${entries.length} manifests, not 1`);
  const indexEntry = descriptor(entries[0], 'index.json manifests[0]');
  const manifestJson = record(
    readJson(await checkBlob(dir, indexEntry)),
    `manifest ${indexEntry.digest}`,
  );
  const manifest = {
    config: descriptor(manifestJson.config, 'manifest config'),
    layers: list(manifestJson.layers, 'manifest layers').map((layer, i) =>
      descriptor(layer, `manifest layers[${i}]`),
    ),
  };
  const config = readJson(await checkBlob(dir, manifest.config)) as ImageConfig;
  if (config.rootfs.diff_ids.length !== manifest.layers.length) {
    throw new Error(
      `config has ${config.rootfs.diff_ids.length} diff_ids for ${manifest.layers.length} layers`,
    );
  }
  for (const [i, layer] of manifest.layers.entries()) {
    const diffId = await fileDigest(await checkBlob(dir, layer), true);
    if (diffId !== config.rootfs.diff_ids[i]) {
      throw new Error(`layer ${layer.digest}: uncompressed digest ${diffId} is not diff_ids[${i}]`);
    }
  }
  return { layoutDir: dir, indexEntry, manifest, config };
}
