/**
 * The house rules of docs/design.md, "Source layout and dependencies", held against the code:
 * no import loop, no import from a room into one above it, every source file in a listed room,
 * no file over 400 lines and no function over 80. A new file lands in a room of this list; a
 * new room is added here at its floor, with docs/design.md.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  importGraph,
  importLoops,
  lineCount,
  longFunctions,
  roomOf,
  sourceFiles,
  upwardImports,
} from '../../support/source-graph.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The rooms, ground floor first: a room imports only itself and the rooms before it. */
const rooms = [
  'src/problem.ts',
  'src/errors.ts',
  'src/is-record.ts',
  'src/logger.ts',
  'src/in-batches.ts',
  'src/net',
  'src/version.ts',
  'src/stop-on-signal.ts',
  'src/lifecycle',
  'src/pki',
  'src/secrets',
  'src/kube',
  'src/annotations',
  'src/validation',
  'src/agent-api',
  'src/haproxy',
  'src/render',
  'src/tls',
  'src/sandbox',
  'src/api',
  'src/certs',
  'src/controller/routing',
  'src/controller/render',
  'src/controller/status',
  'src/controller/delivery',
  'src/controller/watch',
  'src/controller/pipeline',
  'src/webhook',
  'src/controller/admission',
  'src/controller',
  'src/agent',
  'src/cli',
];

const maxFileLines = 400;
const maxFunctionLines = 80;

const files = sourceFiles(root);
const graph = importGraph(root, files);

describe('house rules', () => {
  it('reads the sources', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(graph.get('src/controller/controller.ts')?.length).toBeGreaterThan(0);
  });

  it('has no import loop', () => {
    expect(importLoops(graph)).toEqual([]);
  });

  it('imports only downward: a room imports itself and the rooms below it', () => {
    const { upward, homeless } = upwardImports(graph, rooms);
    expect(homeless, 'files in no listed room: add their room to `rooms` at its floor').toEqual([]);
    expect(upward.map((entry) => `${entry.from} -> ${entry.to}`)).toEqual([]);
  });

  it(`keeps files under ${maxFileLines + 1} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: lineCount(root, file) }))
      .filter((entry) => entry.lines > maxFileLines)
      .map((entry) => `${entry.file}: ${entry.lines} lines`);
    expect(long).toEqual([]);
  });

  it(`keeps functions under ${maxFunctionLines + 1} lines`, () => {
    const long = files
      .flatMap((file) => longFunctions(root, file, maxFunctionLines))
      .map((entry) => `${entry.file}:${entry.line} ${entry.name}: ${entry.lines} lines`);
    expect(long).toEqual([]);
  });
});

describe('the rules themselves', () => {
  const loopGraph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);

  it('finds a loop of three files and leaves out the file that only enters it', () => {
    expect(importLoops(loopGraph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('puts a file in the longest room that holds it', () => {
    expect(roomOf('src/controller/routing/x.ts', rooms)).toBe('src/controller/routing');
    expect(roomOf('src/controller/controller.ts', rooms)).toBe('src/controller');
    expect(roomOf('src/errors.ts', rooms)).toBe('src/errors.ts');
    expect(roomOf('src/errors-extra.ts', rooms)).toBeUndefined();
  });

  it('names an import from a lower room into a higher one', () => {
    const graph = new Map([
      ['src/pki/a.ts', ['src/cli/b.ts', 'src/errors.ts']],
      ['src/cli/b.ts', ['src/pki/a.ts']],
      ['src/stray.ts', []],
    ]);
    expect(upwardImports(graph, rooms)).toEqual({
      upward: [
        { from: 'src/pki/a.ts', to: 'src/cli/b.ts', fromRoom: 'src/pki', toRoom: 'src/cli' },
      ],
      homeless: ['src/stray.ts'],
    });
  });
});
