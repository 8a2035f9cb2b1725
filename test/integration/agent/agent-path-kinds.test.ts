/**
 * An apply that would turn a directory into a file, or a file into a directory, across the real
 * agent process beside a real HAProxy: answered 400 with the path and what to do, nothing
 * changed; the advised two applies then succeed (removals take their emptied directories along).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAtomicProjection } from '../../../dev/lib/atomic-writer.ts';
import { type ApplyFile, encodeApply } from '../../../src/agent-api/apply-encoding.ts';
import { type RawAnswer, rawRequest } from './raw-request.ts';
import { Replica } from './replica.ts';
import { type Site, fetchSite, makeSite, siteFiles } from './site.ts';
import { caPem, identitySecret, leaf, oldAuthority, type Pair } from './test-pki.ts';
import type { CertificateAuthority } from '../../../src/pki/index.ts';

const root = mkdtempSync(join(tmpdir(), 'haptic-agent-paths-'));
let replica: Replica;
let site: Site;
let ca: CertificateAuthority;
let controller: Pair;

function file(path: string, text: string): ApplyFile {
  return { path, content: Buffer.from(text) };
}

async function apply(marker: string, more: readonly ApplyFile[]): Promise<RawAnswer> {
  return rawRequest({
    host: replica.address,
    port: replica.agentPort,
    method: 'POST',
    path: '/v1/apply',
    headers: { 'content-type': 'application/json' },
    body: encodeApply(siteFiles(site, marker, { more })).body.toString(),
    cert: controller.crt,
    key: controller.key,
    ca: caPem(ca),
  });
}

/** The agent's 400 answer for a path conflict on files[3] (the first file after the site's). */
function conflict(message: string) {
  return {
    status: 400,
    body: {
      error: { reason: 'PathInvalid', code: 'PathConflict', field: 'files[3].path', message },
    },
  };
}

async function generation(): Promise<unknown> {
  const answer = await rawRequest({
    host: replica.address,
    port: replica.agentPort,
    cert: controller.crt,
    key: controller.key,
    ca: caPem(ca),
  });
  return (answer.body as { generation?: unknown }).generation;
}

beforeAll(async () => {
  ca = await oldAuthority();
  const agent = await leaf(ca, 'agent', 'haptic-agent');
  controller = await leaf(ca, 'controller', 'haptic-controller');
  site = await makeSite(ca);
  replica = await Replica.create(root, 'haproxy-0', '127.0.26.1', {
    clientName: 'haptic-controller',
  });
  await writeAtomicProjection(replica.tlsDir, identitySecret(agent, [caPem(ca)]));
  await replica.startAgent();
  await replica.startHAProxy();
});

afterAll(async () => {
  await replica.stop();
  rmSync(root, { recursive: true, force: true });
});

const live = (path: string): string => join(replica.baseDir, path);

describe('applies that change what a path is', () => {
  it('refuses a directory where a file is (400, the path, the fix), then applies the advised steps', async () => {
    expect((await apply('v1', [file('extra/data', 'one file')])).status).toBe(200);
    const before = await generation();

    const refused = await apply('v2', [file('extra/data/part.txt', 'now a directory')]);
    expect(refused).toMatchObject(
      conflict(
        'files[3].path "extra/data/part.txt" lies under "extra/data", which is a file on the agent: a directory cannot replace a file in one apply. ' +
          'Apply the set without extra/data first, then this one; or give the files another path. Nothing was changed.',
      ),
    );
    expect(await generation()).toBe(before);
    expect(readFileSync(live('extra/data'), 'utf8')).toBe('one file');
    expect(await fetchSite(replica, site, 'http')).toBe('200 v1 ssl=0');

    expect((await apply('v2', [])).status).toBe(200);
    expect(existsSync(live('extra'))).toBe(false);
    expect((await apply('v3', [file('extra/data/part.txt', 'now a directory')])).status).toBe(200);
    expect(readFileSync(live('extra/data/part.txt'), 'utf8')).toBe('now a directory');
    expect(await fetchSite(replica, site, 'http')).toBe('200 v3 ssl=0');
  });

  it('refuses a file where a directory of files is (400, the path, the fix), then applies the advised steps', async () => {
    const nested = [file('extra/data/part.txt', 'a'), file('extra/data/deeper/more.txt', 'b')];
    expect((await apply('v4', nested)).status).toBe(200);
    const before = await generation();

    const refused = await apply('v5', [file('extra/data', 'now a file')]);
    expect(refused).toMatchObject(
      conflict(
        'files[3].path "extra/data" is a directory on the agent holding extra/data/deeper/more.txt, extra/data/part.txt: a file cannot replace a directory in one apply. ' +
          'Apply the set without the files under extra/data first (the agent then removes the directory), then this one; or give the file another path. Nothing was changed.',
      ),
    );
    expect(await generation()).toBe(before);
    expect(readFileSync(live('extra/data/deeper/more.txt'), 'utf8')).toBe('b');
    expect(await fetchSite(replica, site, 'http')).toBe('200 v4 ssl=0');

    expect((await apply('v5', [file('extra/other', 'kept')])).status).toBe(200);
    expect(existsSync(live('extra/data'))).toBe(false);
    expect(readFileSync(live('extra/other'), 'utf8')).toBe('kept');
    expect((await apply('v6', [file('extra/data', 'now a file')])).status).toBe(200);
    expect(readFileSync(live('extra/data'), 'utf8')).toBe('now a file');
    expect(await fetchSite(replica, site, 'http')).toBe('200 v6 ssl=0');
  });

  it('replaces a directory that holds no files, as an older agent may have left one', async () => {
    mkdirSync(live('extra/empty/inner'), { recursive: true });
    expect((await apply('v7', [file('extra/empty', 'a file now')])).status).toBe(200);
    expect(readFileSync(live('extra/empty'), 'utf8')).toBe('a file now');
    expect(await fetchSite(replica, site, 'http')).toBe('200 v7 ssl=0');
  });
});
