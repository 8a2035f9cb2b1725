/**
 * The lint reads words as HAProxy does, checked against the real `haproxy -c`: every byte
 * 0x00-0xFF inserted at every position of `lua-load <file>` and `no lua-load <file>` (before,
 * inside and after the keywords and their separators). Each variant loads its own Lua file,
 * which creates a marker file when HAProxy runs it, so what HAProxy did is observed without
 * trusting the lint. For every variant, HAProxy ran the Lua exactly when our tokenizer reads
 * the line as that lua-load, and the lint refuses every line HAProxy ran.
 *
 * Variants go 40 to a `haproxy -c` run (below HAProxy's 50 fatal errors), followed by a
 * sentinel lua-load; when the sentinel did not run, HAProxy stopped early (`.lua-load` is an
 * unknown directive and ends parsing, so does a NUL), and the batch is split and run again.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectHaproxyConfig } from '../../../src/haproxy/config-lint.ts';
import { splitConfig } from '../../../src/haproxy/config-words.ts';

const dir = mkdtempSync(join(tmpdir(), 'haptic-fuzz-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Variant {
  readonly id: number;
  /** The directive with one byte inserted, as the bytes HAProxy reads. */
  readonly bytes: Buffer;
  readonly family: string;
  readonly byte: number;
  readonly position: number;
}

/** A Lua file that creates `marker` when it runs. */
function luaFile(name: string, marker: string): string {
  writeFileSync(
    join(dir, name),
    `local f = io.open(${JSON.stringify(join(dir, marker))}, "w")\nif f then f:close() end\n`,
  );
  return name;
}

const families = [
  { name: 'lua-load', directive: (file: string) => `lua-load ${file}`, prefix: 'lua-load ' },
  {
    name: 'no lua-load',
    directive: (file: string) => `no lua-load ${file}`,
    prefix: 'no lua-load ',
  },
];

function variants(): Variant[] {
  const all: Variant[] = [];
  for (const family of families) {
    // Every position up to and including the one just before the file name.
    for (let position = 0; position <= family.prefix.length; position += 1) {
      for (let byte = 0; byte <= 0xff; byte += 1) {
        const id = all.length;
        const file = luaFile(`l${id}.lua`, `m${id}`);
        const text = Buffer.from(family.directive(file), 'latin1');
        const bytes = Buffer.concat([
          text.subarray(0, position),
          Buffer.from([byte]),
          text.subarray(position),
        ]);
        all.push({ id, bytes, family: family.name, byte, position });
      }
    }
  }
  return all;
}

let runs = 0;

/** Runs `haproxy -c` on the batch; which variants ran their Lua. Splits when HAProxy stopped early. */
async function ranLua(batch: readonly Variant[]): Promise<Map<number, boolean>> {
  runs += 1;
  const sentinel = `s${runs}`;
  const config = Buffer.concat([
    Buffer.from('global\n'),
    ...batch.flatMap((variant) => [variant.bytes, Buffer.from('\n')]),
    Buffer.from(`lua-load ${luaFile(`${sentinel}.lua`, sentinel)}\n`),
  ]);
  const path = join(dir, `${sentinel}.cfg`);
  writeFileSync(path, config);
  const result = await execa('haproxy', ['-c', '-f', path], {
    cwd: dir,
    reject: false,
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '' },
    extendEnv: false,
  });
  expect(result.timedOut).toBe(false);
  const marked = (id: number): boolean => existsSync(join(dir, `m${id}`));
  if (existsSync(join(dir, sentinel)) || batch.length === 1) {
    return new Map(batch.map((variant) => [variant.id, marked(variant.id)]));
  }
  for (const variant of batch) rmSync(join(dir, `m${variant.id}`), { force: true });
  const half = Math.ceil(batch.length / 2);
  const [first, second] = await Promise.all([
    ranLua(batch.slice(0, half)),
    ranLua(batch.slice(half)),
  ]);
  return new Map([...first, ...second]);
}

/** Our tokenizer reads one of the variant's lines as `[no|default] lua-load <its file>`. */
function readAsLuaLoad(variant: Variant): boolean {
  const file = `l${variant.id}.lua`;
  return splitConfig(variant.bytes.toString('utf8')).some((line) => {
    if (line.error !== undefined || line.scope) return false;
    const texts = line.words.map((word) => word.text);
    const words = texts[0] === 'no' || texts[0] === 'default' ? texts.slice(1) : texts;
    return words[0] === 'lua-load' && words[1] === file;
  });
}

describe('the tokenizer against haproxy -c, every byte at every position', () => {
  it('reads lua-load exactly when HAProxy runs it, and the lint refuses every such line', async () => {
    const all = variants();
    const batches: Variant[][] = [];
    for (let start = 0; start < all.length; start += 40) batches.push(all.slice(start, start + 40));
    const results = new Map<number, boolean>();
    // Two runs at a time: the machine's two cores.
    const queue = [...batches];
    await Promise.all(
      [0, 1].map(async () => {
        for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
          for (const [id, ran] of await ranLua(batch)) results.set(id, ran);
        }
      }),
    );
    const describeVariant = (variant: Variant): string =>
      `${variant.family} with 0x${variant.byte.toString(16).padStart(2, '0')} at ${variant.position}`;
    const mismatches = all
      .filter((variant) => results.get(variant.id) !== readAsLuaLoad(variant))
      .map((variant) => `${describeVariant(variant)}: HAProxy ran it: ${results.get(variant.id)}`);
    expect(mismatches).toEqual([]);
    const ran = all.filter((variant) => results.get(variant.id) === true);
    const notRefused = ran
      .filter((variant) => {
        const findings = inspectHaproxyConfig(
          `global\n${variant.bytes.toString('utf8')}\n`,
        ).findings;
        return findings.length === 0;
      })
      .map(describeVariant);
    expect(notRefused).toEqual([]);
    // The bytes HAProxy takes as space before a keyword: all six of C's isspace().
    const leading = ran
      .filter((v) => v.family === 'lua-load' && v.position === 0)
      .map((v) => v.byte);
    expect(leading).toEqual([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);
  });
});
