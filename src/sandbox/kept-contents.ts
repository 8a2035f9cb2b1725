/**
 * Contents the check sandbox already holds, so a client sends only what changed: most
 * reviews change a map line or two, while haproxy.cfg (megabytes at thousands of Ingresses)
 * stays the same text. An entry of a check request without `content` names the content by
 * its digest; the sandbox takes it from the files of the last request it parsed, which it
 * keeps in its own memory (never on disk, where a check could alter them). A digest it does
 * not hold is answered 409 ContentUnknown and the client sends everything again.
 *
 * Every other rule is the agents' (parseApplyRequest): a kept entry stands in the parse as
 * an empty file with the empty file's digest, so its path, the set's paths and counts are
 * checked as for any file, and the kept bytes, checked against their digest when they came,
 * count towards the total size.
 */
import type { ApplyFile } from '../agent-api/apply-encoding.ts';
import {
  type ApplyLimits,
  type DesiredFile,
  type ParsedApplyRequest,
  digestOf,
  parseApplyRequest,
} from '../agent-api/apply-request.ts';
import { agentReasons } from '../agent-api/reasons.ts';
import { contentDigest } from './content-digest.ts';
import { type ContentUnknown, contentUnknownReason } from './sandbox-protocol.ts';
import { isRecord } from '../is-record.ts';

const emptyDigest = digestOf(new Uint8Array());

/** A check request body: the content of a file whose digest is in `held` is left out. */
export function encodeCheckRequest(
  files: readonly ApplyFile[],
  held: ReadonlySet<string>,
): { readonly body: Buffer; readonly digests: ReadonlySet<string> } {
  const digests = new Set<string>();
  const entries = files.map((file) => {
    const digest = contentDigest(file.content);
    digests.add(digest);
    return held.has(digest)
      ? { path: file.path, digest }
      : { path: file.path, digest, content: Buffer.from(file.content).toString('base64') };
  });
  return { body: Buffer.from(JSON.stringify({ files: entries })), digests };
}

/** The sandbox's side: the files of the last request it parsed, by digest. */
export class KeptContents {
  #byDigest = new Map<string, Buffer>();

  /** Parses a decoded body as the agents do, with kept contents filled in; never throws. */
  parse(body: unknown, limits: ApplyLimits): ParsedApplyRequest | ContentUnknown {
    const kept = new Map<number, { readonly digest: string; readonly content: Buffer }>();
    let substituted = body;
    if (isRecord(body) && Array.isArray(body.files)) {
      const entries: readonly unknown[] = body.files;
      const stand: unknown[] = [];
      for (const [index, entry] of entries.entries()) {
        if (!isRecord(entry) || 'content' in entry) {
          stand.push(entry);
          continue;
        }
        const digest = typeof entry.digest === 'string' ? entry.digest : '';
        const content = this.#byDigest.get(digest);
        if (content === undefined) {
          return {
            ok: false,
            reason: contentUnknownReason,
            field: `files[${index}].content`,
            message: `files[${index}] has no content and the sandbox holds none with its digest; send the file with its content.`,
          };
        }
        kept.set(index, { digest, content });
        stand.push({ path: entry.path, digest: emptyDigest, content: '' });
      }
      substituted = { ...body, files: stand };
    }
    const parsed = parseApplyRequest(substituted, limits);
    if (!parsed.ok) return parsed;
    const files = parsed.files.map((file, index): DesiredFile => {
      const held = kept.get(index);
      return held === undefined ? file : { path: file.path, ...held };
    });
    const total = files.reduce((sum, file) => sum + file.content.byteLength, 0);
    if (total > limits.maxTotalBytes) {
      return {
        ok: false,
        reason: agentReasons.TooLarge,
        code: agentReasons.TooLarge,
        field: 'files',
        message: `The files add up to more than ${limits.maxTotalBytes} bytes.`,
      };
    }
    this.#byDigest = new Map(files.map((file) => [file.digest, file.content]));
    return { ok: true, files };
  }
}
