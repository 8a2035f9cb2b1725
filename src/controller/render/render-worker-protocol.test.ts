import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  commonPrefix,
  commonSuffix,
  filesToSend,
  receivedFiles,
} from './render-worker-protocol.ts';
import type { RenderedFile } from './template-engine.ts';

const files = (cfg: string, map: string): RenderedFile[] => [
  { path: 'haproxy.cfg', content: cfg },
  { path: 'maps/exact.map', content: map },
];

describe('rendered files between the render process and the controller', () => {
  it('sends a text again only when it changed, and the controller gets every file whole', () => {
    const sent = new Map<string, string>();
    const received = new Map<string, string>();
    const outcomes = [files('a', '1'), files('a', '2'), files('b', '2'), files('b', '2')];
    const wire = outcomes.map((outcome) => filesToSend(outcome, sent));
    expect(wire[1]).toEqual([
      { path: 'haproxy.cfg', same: true },
      { path: 'maps/exact.map', content: '2' },
    ]);
    expect(wire[3]?.every((file) => 'same' in file)).toBe(true);
    expect(wire.map((sentFiles) => receivedFiles(sentFiles, received))).toEqual(outcomes);
  });

  it('names a file marked unchanged or edited whose last text it never got', () => {
    const never = 'it sent haproxy.cfg as a change of a text it did not send before';
    expect(receivedFiles([{ path: 'haproxy.cfg', same: true }], new Map())).toBe(never);
    const edit = { path: 'haproxy.cfg', prefix: 1, suffix: 0, middle: 'x' };
    expect(receivedFiles([edit], new Map())).toBe(never);
    // An edit keeping more than the last text held is refused, not glued together.
    expect(
      receivedFiles([{ ...edit, prefix: 3, suffix: 2 }], new Map([['haproxy.cfg', 'abcd']])),
    ).toBe(never);
  });

  it('sends a text with a small change as an edit, and the controller gets it whole', () => {
    const line = (index: number): string => `/path/${String(index)} app_svc_80\n`;
    const map = (lines: readonly number[]): string => lines.map(line).join('');
    const all = Array.from({ length: 50 }, (_, index) => index);
    const texts = [
      map(all),
      map([...all.slice(0, 20), 999, ...all.slice(20)]),
      map(all),
      map(all.slice(1)),
      map([...all.slice(1), 50]),
      '',
      map(all),
      map(all).replace('/path/7 ', '/path/7é '),
      'whole new text',
    ];
    const sent = new Map<string, string>();
    const received = new Map<string, string>();
    for (const [index, text] of texts.entries()) {
      const [wire] = filesToSend([{ path: 'maps/exact.map', content: text }], sent);
      // One line added: only as many characters as it has cross (where they start may shift).
      if (index === 1) {
        expect(wire !== undefined && 'middle' in wire ? wire.middle : '').toHaveLength(
          line(999).length,
        );
      }
      expect(receivedFiles(wire === undefined ? [] : [wire], received)).toEqual([
        { path: 'maps/exact.map', content: text },
      ]);
    }
  });

  it('marks a file that is new in this outcome as sent in full', () => {
    const sent = new Map<string, string>();
    filesToSend(files('a', '1'), sent);
    expect(filesToSend([...files('a', '1'), { path: 'maps/new.map', content: 'x' }], sent)).toEqual(
      [
        { path: 'haproxy.cfg', same: true },
        { path: 'maps/exact.map', same: true },
        { path: 'maps/new.map', content: 'x' },
      ],
    );
  });
});

describe('the common prefix and suffix of an edit', () => {
  const naivePrefix = (a: string, b: string, most: number): number => {
    let at = 0;
    while (at < most && a[at] === b[at]) at += 1;
    return at;
  };
  const naiveSuffix = (a: string, b: string, most: number): number => {
    let at = 0;
    while (at < most && a[a.length - 1 - at] === b[b.length - 1 - at]) at += 1;
    return at;
  };
  // Shared parts longer than the 1,024 characters compared at once, differences anywhere.
  const text = fc.string({
    unit: fc.constantFrom('a', 'b', '\n'),
    maxLength: 3_000,
    size: 'max',
  });

  it('equal a character-by-character reading, whatever the lengths and bounds', () => {
    fc.assert(
      fc.property(text, text, text, text, fc.nat(), (head, a, b, tail, cut) => {
        const left = head + a + tail;
        const right = head + b + tail;
        const longest = Math.min(left.length, right.length);
        const most = longest === 0 ? 0 : cut % (longest + 1);
        const prefix = commonPrefix(left, right, most);
        expect(prefix).toBe(naivePrefix(left, right, most));
        expect(commonSuffix(left, right, longest - prefix)).toBe(
          naiveSuffix(left, right, longest - prefix),
        );
      }),
      // A counterexample is reported as found: shrinking texts this long takes minutes.
      { numRuns: 500, endOnFailure: true },
    );
  });

  it('finds a difference exactly at a chunk boundary and one just inside it', () => {
    const base = 'x'.repeat(4_096);
    for (const at of [0, 1, 1_023, 1_024, 1_025, 2_048, 4_095]) {
      const other = `${base.slice(0, at)}y${base.slice(at + 1)}`;
      expect(commonPrefix(base, other, base.length)).toBe(at);
      expect(commonSuffix(base, other, base.length)).toBe(base.length - 1 - at);
    }
    // Never beyond the bound, however much more the texts share.
    expect(commonPrefix(base, base, 2_500)).toBe(2_500);
    expect(commonSuffix(base, base, 1_500)).toBe(1_500);
  });
});
