import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bundleDigest } from './render-bundle.ts';

const file = (path: string, text: string) => ({ path, content: Buffer.from(text) });
const sha = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('bundleDigest', () => {
  it('is the same for the same paths and contents, whatever Buffers hold them', () => {
    const set = [file('haproxy.cfg', 'global\n'), file('maps/exact.map', 'a b\n')];
    const again = [file('haproxy.cfg', 'global\n'), file('maps/exact.map', 'a b\n')];
    expect(bundleDigest(again)).toBe(bundleDigest(set));
  });

  it('changes with any content, any path and any file added or removed', () => {
    const base = [file('haproxy.cfg', 'global\n'), file('maps/exact.map', 'a b\n')];
    const digest = bundleDigest(base);
    for (const other of [
      [file('haproxy.cfg', 'global\n'), file('maps/exact.map', 'a c\n')],
      [file('haproxy.cfg', 'global\n'), file('maps/other.map', 'a b\n')],
      [file('haproxy.cfg', 'global\n')],
      [...base, file('ssl/x.crt-list', '')],
    ]) {
      expect(bundleDigest(other)).not.toBe(digest);
    }
  });

  it('lets no path pass for two files: its length comes first', () => {
    const one = [file('a', 'x'), file('b', 'y')];
    // A single path spelling out the first entry and the start of the second, in this
    // encoding and in the `path digest` lines of the agents' set digest.
    for (const path of [`a${sha('x')}\n1:b`, `a ${sha('x')}\nb`]) {
      expect(bundleDigest([file(path, 'y')])).not.toBe(bundleDigest(one));
    }
  });
});
