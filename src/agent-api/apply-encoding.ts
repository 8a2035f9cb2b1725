/**
 * Encoding a complete set of files as the body of the agents' `POST /v1/apply`, which the
 * check sandbox's `POST /v1/check` takes as well: each file's path, `sha256:` digest and
 * base64 content. The agent and the sandbox parse it back with apply-request.ts.
 */
import { type ApplyRequestBody, configFileName } from './api-types.ts';
import { digestOf } from './apply-request.ts';

/** A file of the set: a path relative to the base directory and its bytes. */
export interface ApplyFile {
  readonly path: string;
  readonly content: Uint8Array;
}

/** An apply request, encoded once and sent to every agent (or to the sandbox). */
export interface EncodedApply {
  readonly body: Buffer;
  /** Digest of haproxy.cfg in the set; empty when it has none. */
  readonly configDigest: string;
}

/** `digests`: the files' `sha256:` digests by path, when the caller has them already. */
export function encodeApply(
  files: readonly ApplyFile[],
  digests?: ReadonlyMap<string, string>,
): EncodedApply {
  const body: ApplyRequestBody = {
    files: files.map((file) => ({
      path: file.path,
      digest: digests?.get(file.path) ?? digestOf(file.content),
      content: Buffer.from(file.content).toString('base64'),
    })),
  };
  const config = body.files.find((file) => file.path === configFileName);
  return { body: Buffer.from(JSON.stringify(body)), configDigest: config?.digest ?? '' };
}
