import { describe, expect, it } from 'vitest';
import { filesToSend, receivedFiles } from './render-worker-protocol.ts';
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

  it('names a file marked unchanged that was never sent', () => {
    expect(receivedFiles([{ path: 'haproxy.cfg', same: true }], new Map())).toBe(
      'it named haproxy.cfg unchanged without having sent it',
    );
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
