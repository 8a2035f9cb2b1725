/**
 * digestOf, once per content object: a pipeline reuses the bytes of a file whose text did not
 * change (render-bundle.ts), and a review digests a set several times (its check result key,
 * the slot-only comparison, the check request), so an unchanged haproxy.cfg of megabytes is
 * hashed once. Contents of a rendered set are never written to after it is made.
 */
import { digestOf } from '../agent-api/apply-request.ts';

const digests = new WeakMap<Uint8Array, string>();

export function contentDigest(content: Uint8Array): string {
  let digest = digests.get(content);
  if (digest === undefined) {
    digest = digestOf(content);
    digests.set(content, digest);
  }
  return digest;
}
