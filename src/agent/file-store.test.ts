import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DesiredFile, digestOf } from '../agent-api/apply-request.ts';
import { ConfigFileStore } from './file-store.ts';

function desired(path: string, text: string): DesiredFile {
  const content = Buffer.from(text);
  return { path, content, digest: digestOf(content) };
}

/** A base directory holding haproxy.cfg and maps/hosts.map, as an earlier apply left them. */
function applied(): { base: string; store: ConfigFileStore } {
  const base = mkdtempSync(join(tmpdir(), 'file-store-'));
  mkdirSync(join(base, 'maps'));
  writeFileSync(join(base, 'haproxy.cfg'), 'old config\n');
  writeFileSync(join(base, 'maps/hosts.map'), 'old map\n');
  return { base, store: new ConfigFileStore(base) };
}

/** A new haproxy.cfg, a map added and the old map removed. */
const swap = {
  writes: [desired('maps/new.map', 'added\n'), desired('haproxy.cfg', 'new config\n')],
  removals: ['maps/hosts.map'],
};

const read = (base: string, path: string): string => readFileSync(join(base, path), 'utf8');

/** Every file under the base directory, the agent's work directory included. */
function tree(base: string): string[] {
  return readdirSync(base, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(base.length + 1))
    .sort();
}

describe('ConfigFileStore', () => {
  it('puts a plan in place and, once committed, keeps nothing but the live files', async () => {
    const { base, store } = applied();
    await store.prepare();
    await store.put(swap);
    await store.commit();

    expect(read(base, 'haproxy.cfg')).toBe('new config\n');
    expect(read(base, 'maps/new.map')).toBe('added\n');
    // No journal, staged copy or temporary file is left once the next apply starts.
    await store.put({ writes: [], removals: [] });
    await store.commit();
    expect(tree(base)).toEqual(['haproxy.cfg', 'maps/new.map']);
    expect(await new ConfigFileStore(base).recover()).toBe(false);
  });

  it('restores the last-known-good files after a crash between the swap and its end', async () => {
    const { base, store } = applied();
    await store.prepare();
    await store.put(swap);
    // The process ends here: neither commit nor rollback. A new agent starts.
    expect(read(base, 'haproxy.cfg')).toBe('new config\n');

    expect(await new ConfigFileStore(base).recover()).toBe(true);
    expect(read(base, 'haproxy.cfg')).toBe('old config\n');
    expect(read(base, 'maps/hosts.map')).toBe('old map\n');
    // A file the interrupted apply created goes with it.
    expect(tree(base)).toEqual(['haproxy.cfg', 'maps/hosts.map']);
    // Recovered once: the next start has nothing to restore.
    expect(await new ConfigFileStore(base).recover()).toBe(false);
  });

  it('rolls back a swap that failed half-way, the files before the failure included', async () => {
    const { base, store } = applied();
    await store.prepare();
    // The second write's directory is a file: its rename fails after the first is in place.
    writeFileSync(join(base, 'certs'), 'a file where a directory is wanted\n');
    const plan = {
      writes: [desired('maps/hosts.map', 'new map\n'), desired('certs/site.pem', 'pem\n')],
      removals: [],
    };
    await expect(store.put(plan)).rejects.toThrow(/EEXIST|ENOTDIR/);
    expect(read(base, 'maps/hosts.map')).toBe('new map\n');

    await store.rollback();
    expect(read(base, 'maps/hosts.map')).toBe('old map\n');
    expect(read(base, 'haproxy.cfg')).toBe('old config\n');
    expect(tree(base)).toEqual(['certs', 'haproxy.cfg', 'maps/hosts.map']);
  });

  it('writes a file holding a private key readable by owner and group only', async () => {
    const { base, store } = applied();
    await store.prepare();
    await store.put({
      writes: [desired('certs/site.pem', '-----BEGIN PRIVATE KEY-----\n'), desired('a.map', 'x\n')],
      removals: [],
    });
    await store.commit();
    expect(statSync(join(base, 'certs/site.pem')).mode & 0o777).toBe(0o640);
    expect(statSync(join(base, 'a.map')).mode & 0o777).toBe(0o644);
  });

  it('refuses to start on a journal it cannot read, naming it and what to do', async () => {
    const { base, store } = applied();
    await store.prepare();
    writeFileSync(join(base, '.haptic/journal.json'), '{"writes": ["../../etc/passwd"]}');
    await expect(store.recover()).rejects.toThrow(
      `${join(base, '.haptic/journal.json')} is not an apply journal; remove it after checking ${base}.`,
    );
    expect(read(base, 'haproxy.cfg')).toBe('old config\n');
  });
});
