/**
 * The check sandbox as a real process (`haptic sandbox serve`, as root dropped to 65534) with
 * a real HAProxy: answers for valid and invalid sets, hostile Lua that finds nothing to read
 * and an environment of PATH, HOME and TMPDIR only, malformed and oversize requests refused
 * with the field and the fix, the time, memory and concurrency limits. The lint is bypassed
 * on purpose: these requests go to the socket directly, as a lint bypass would reach it.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import { digestOf } from '../../../src/agent-api/apply-request.ts';
import { type CheckFile, checkHAProxyConfig } from '../../../src/sandbox/check-client.ts';

const validConfig = `global
  maxconn 100
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 5s
frontend web
  bind :8080
  use_backend %[req.hdr(host),lower,map(maps/hosts.map,default)]
backend default
  server app 127.0.0.1:9000
`;

function file(path: string, content: string): CheckFile {
  return { path, content: Buffer.from(content) };
}

function luaConfig(script: string): CheckFile[] {
  return [
    file('haproxy.cfg', 'global\n  lua-load files/payload.lua\n'),
    file('files/payload.lua', script),
  ];
}

interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

/** One raw HTTP request on the sandbox socket. */
function raw(
  socket: string,
  method: string,
  path: string,
  body: Buffer | string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const call = request({ socketPath: socket, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
      });
    });
    call.on('error', reject);
    call.end(body);
  });
}

function applyBody(files: readonly { path: string; content: string }[]): string {
  return JSON.stringify({
    files: files.map((entry) => ({
      path: entry.path,
      digest: digestOf(Buffer.from(entry.content)),
      content: Buffer.from(entry.content).toString('base64'),
    })),
  });
}

describe('check sandbox (haptic sandbox serve)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-sandbox-test-'));
  let sandbox: LocalSandbox;

  beforeAll(async () => {
    sandbox = await startLocalSandbox({ dir: join(dir, 'default') });
  });

  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts a valid set with its map, and names the file and line of a rejected one', async () => {
    const valid = await checkHAProxyConfig(
      [file('haproxy.cfg', validConfig), file('maps/hosts.map', 'example.com default\n')],
      { socket: sandbox.socket },
    );
    expect(valid).toEqual({ ok: true });
    const invalid = await checkHAProxyConfig(
      [file('haproxy.cfg', `${validConfig}  bogus-directive on\n`)],
      { socket: sandbox.socket },
    );
    expect(invalid).toMatchObject({ ok: false, failure: 'rejected' });
    // Reduced inside the sandbox: file:line, the keyword and a reason from a fixed list.
    expect(invalid.ok ? '' : invalid.message).toBe(
      "[ALERT] haproxy.cfg:13: 'bogus-directive' is not a keyword HAProxy knows in this section",
    );
    expect(invalid.ok ? '' : invalid.message).not.toContain(tmpdir());
  });

  it('takes files named by digest alone from the last request it parsed, and asks again for one it does not hold', async () => {
    const post = (entries: readonly object[]): Promise<RawAnswer> =>
      raw(sandbox.socket, 'POST', '/v1/check', JSON.stringify({ files: entries }));
    const named = (path: string, content: string): object => ({
      path,
      digest: digestOf(Buffer.from(content)),
    });
    const invalidConfig = `${validConfig}  bogus-directive on\n`;
    const full = JSON.parse(
      applyBody([
        { path: 'haproxy.cfg', content: validConfig },
        { path: 'maps/hosts.map', content: 'example.com default\n' },
      ]),
    ) as { files: object[] };
    expect((await post(full.files)).body).toBe('{"ok":true}');
    // haproxy.cfg by its digest, the changed map with its content.
    const [, changedMap] = (
      JSON.parse(
        applyBody([
          { path: 'haproxy.cfg', content: validConfig },
          { path: 'maps/hosts.map', content: 'example.org default\n' },
        ]),
      ) as { files: object[] }
    ).files;
    expect(changedMap).toBeDefined();
    const kept = await post([named('haproxy.cfg', validConfig), changedMap ?? {}]);
    expect(kept).toEqual({ status: 200, body: '{"ok":true}' });
    // Content it never took: 409 naming the entry, and the files it holds stay.
    const unknown = await post([named('haproxy.cfg', invalidConfig)]);
    expect(unknown.status).toBe(409);
    expect(JSON.parse(unknown.body)).toMatchObject({
      error: { reason: 'ContentUnknown', field: 'files[0].content' },
    });
    // A named entry obeys the agents' path rules like any other.
    const escaped = await post([named('/etc/passwd', validConfig)]);
    expect(escaped.status).toBe(400);
    expect(JSON.parse(escaped.body)).toMatchObject({
      error: { reason: 'PathInvalid', field: 'files[0].path' },
    });
    // The kept bytes are what HAProxy checks: a rejected configuration named by digest alone.
    const rejected = JSON.parse(applyBody([{ path: 'haproxy.cfg', content: invalidConfig }])) as {
      files: object[];
    };
    expect(JSON.parse((await post(rejected.files)).body)).toMatchObject({ ok: false });
    const again = JSON.parse((await post([named('haproxy.cfg', invalidConfig)])).body) as unknown;
    expect(again).toEqual({
      ok: false,
      failure: 'rejected',
      message:
        "[ALERT] haproxy.cfg:13: 'bogus-directive' is not a keyword HAProxy knows in this section",
    });
    // The client sends by digest what the sandbox took last; when the sandbox took another
    // set since, it is told so and sends every content again.
    const set = [file('haproxy.cfg', validConfig), file('maps/hosts.map', 'a.example default\n')];
    expect(await checkHAProxyConfig(set, { socket: sandbox.socket })).toEqual({ ok: true });
    expect((await post(full.files)).status).toBe(200);
    expect(await checkHAProxyConfig(set, { socket: sandbox.socket })).toEqual({ ok: true });
  });

  it('runs hostile Lua as another user with nothing to read and an environment of PATH, HOME and TMPDIR', async () => {
    // A secret only root may read, in a directory anyone may enter (like the controller's
    // tls.key or ServiceAccount token), and a directory the payload may write its findings to.
    const open = mkdtempSync(join(tmpdir(), 'haptic-sandbox-secret-'));
    chmodSync(open, 0o755);
    const secret = join(open, 'tls.key');
    writeFileSync(secret, 'controller private key', { mode: 0o600 });
    const outbox = join(open, 'outbox');
    const marker = join(outbox, 'marker');
    mkdirSync(outbox, { mode: 0o777 });
    chmodSync(outbox, 0o777);
    const payload = `
local out = assert(io.open("${marker}", "w"))
local secret, err = io.open("${secret}", "r")
if secret then out:write("read:" .. secret:read("a") .. "\\n") else out:write("denied:" .. tostring(err) .. "\\n") end
local environ = assert(io.open("/proc/self/environ", "r")):read("a")
for entry in environ:gmatch("[^%z]+") do out:write("env:" .. entry:match("^[^=]*") .. "\\n") end
local status = assert(io.open("/proc/self/status", "r")):read("a")
out:write("uid:" .. status:match("Uid:%s+(%d+)") .. "\\n")
out:close()
`;
    const outcome = await checkHAProxyConfig(luaConfig(payload), { socket: sandbox.socket });
    // The Lua ran (this request skipped the lint): HAProxy is what the sandbox contains.
    expect(outcome.ok || outcome.failure === 'rejected').toBe(true);
    const findings = readFileSync(marker, 'utf8');
    expect(findings).toMatch(/^denied:.*Permission denied$/m);
    expect(findings).not.toContain('controller private key');
    const env = [...findings.matchAll(/^env:(.*)$/gm)].map((match) => match[1]);
    expect(env.sort()).toEqual(['HOME', 'PATH', 'TMPDIR']);
    expect(findings).toMatch(/^uid:65534$/m);
    rmSync(open, { recursive: true, force: true });
  });

  it('refuses malformed requests with the field and the fix, and keeps serving', async () => {
    const cases: [string, Promise<RawAnswer>, number, RegExp][] = [
      [
        'not JSON',
        raw(sandbox.socket, 'POST', '/v1/check', '{"files": ['),
        400,
        /not JSON.*send \{"files"/,
      ],
      [
        'another content type',
        raw(sandbox.socket, 'POST', '/v1/check', 'x', { 'content-type': 'text/plain' }),
        415,
        /Content-Type: application\/json/,
      ],
      [
        'an absolute path',
        raw(
          sandbox.socket,
          'POST',
          '/v1/check',
          applyBody([{ path: '/etc/passwd', content: 'x' }]),
        ),
        400,
        /files\[0\]\.path "\/etc\/passwd" must be relative/,
      ],
      [
        'a .. segment',
        raw(
          sandbox.socket,
          'POST',
          '/v1/check',
          applyBody([{ path: 'maps/../../x', content: 'x' }]),
        ),
        400,
        /must not contain "\.\." segments/,
      ],
      [
        'a NUL byte in a path',
        raw(sandbox.socket, 'POST', '/v1/check', applyBody([{ path: 'a\u0000b', content: 'x' }])),
        400,
        /files\[0\]\.path .* has the segment/,
      ],
      [
        'a file under a file (a directory swapped for a link)',
        raw(
          sandbox.socket,
          'POST',
          '/v1/check',
          applyBody([
            { path: 'haproxy.cfg', content: 'global\n' },
            { path: 'maps', content: 'x' },
            { path: 'maps/hosts.map', content: 'x' },
          ]),
        ),
        400,
        /"maps\/hosts\.map" lies under "maps", which is also a file/,
      ],
      [
        'no haproxy.cfg',
        raw(sandbox.socket, 'POST', '/v1/check', applyBody([{ path: 'maps/a', content: 'x' }])),
        400,
        /files must include haproxy\.cfg/,
      ],
      ['an unknown path', raw(sandbox.socket, 'GET', '/v1/apply', ''), 404, /POST \/v1\/check/],
    ];
    for (const [what, answer, status, message] of cases) {
      const got = await answer;
      expect({ what, status: got.status }).toEqual({ what, status });
      const body = JSON.parse(got.body) as { error: { message: string } };
      expect(body.error.message, what).toMatch(message);
    }
    expect(
      await checkHAProxyConfig([file('haproxy.cfg', validConfig), file('maps/hosts.map', '')], {
        socket: sandbox.socket,
      }),
    ).toEqual({ ok: true });
  });

  it('refuses more files or bytes than an agent apply takes', async () => {
    const many = Array.from({ length: 10_001 }, (_, index) => ({ path: `f${index}`, content: '' }));
    const tooMany = await raw(sandbox.socket, 'POST', '/v1/check', applyBody(many));
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatch(/files has 10001 entries, more than the 10000 allowed/);
    // Over the body limit (about 74 MiB): read to its end and answered, never buffered whole.
    const huge = Buffer.alloc(80 * 1024 * 1024, 0x20);
    const tooLarge = await raw(sandbox.socket, 'POST', '/v1/check', huge);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatch(/request body exceeds \d+ bytes/);
    // Through the client, an oversize set is a rejection of the files, named as such.
    const big = await checkHAProxyConfig(
      [file('haproxy.cfg', validConfig), file('files/big', 'x'.repeat(17 * 1024 * 1024))],
      { socket: sandbox.socket },
    );
    expect(big).toMatchObject({ ok: false, failure: 'rejected' });
    expect(big.ok ? '' : big.message).toMatch(/files\[1\] \(files\/big\) is larger than 16777216/);
  });

  it('writes every file of a set larger than one batch of writes', async () => {
    const maps = [
      file('maps/hosts.map', 'example.com default\n'),
      ...Array.from({ length: 40 }, (_, index) =>
        file(`maps/m${String(index)}.map`, `example${String(index)}.com default\n`),
      ),
    ];
    const config = validConfig.replace(
      '  use_backend',
      '  http-request set-var(txn.first) req.hdr(host),map(maps/m0.map)\n  http-request set-var(txn.last) req.hdr(host),map(maps/m39.map)\n  use_backend',
    );
    expect(
      await checkHAProxyConfig([file('haproxy.cfg', config), ...maps], { socket: sandbox.socket }),
    ).toEqual({ ok: true });
    // The last map is read: without it the set is rejected.
    const outcome = await checkHAProxyConfig([file('haproxy.cfg', config), ...maps.slice(0, 39)], {
      socket: sandbox.socket,
    });
    expect(outcome).toMatchObject({ ok: false, failure: 'rejected' });
  });

  it('removes every check directory, never keeping more than twice the concurrent checks', async () => {
    // Root drops to 65534 in the sandbox: its work directory must be open to it.
    const workDir = mkdtempSync(join(tmpdir(), 'haptic-sandbox-work-'));
    chmodSync(workDir, 0o1777);
    const own = await startLocalSandbox({
      dir: join(dir, 'own'),
      extraArgs: [`--work-dir=${workDir}`, '--max-concurrent=2'],
    });
    const checkDirectories = (): string[] =>
      readdirSync(workDir).flatMap((sandboxDir) =>
        readdirSync(join(workDir, sandboxDir)).filter((name) => name.startsWith('check-')),
      );
    try {
      const seen: number[] = [];
      const check = async (round: number): Promise<void> => {
        const outcome = await checkHAProxyConfig(
          [
            file('haproxy.cfg', validConfig),
            file('maps/hosts.map', `example${String(round)}.com default\n`),
          ],
          { socket: own.socket },
        );
        expect(outcome).toEqual({ ok: true });
        seen.push(checkDirectories().length);
      };
      // Back to back, then two at a time.
      for (let round = 0; round < 4; round += 1) await check(round);
      await Promise.all([4, 5, 6, 7].map(check));
      expect(Math.max(...seen)).toBeLessThanOrEqual(4);
      await vi.waitFor(() => {
        expect(checkDirectories()).toEqual([]);
      });
    } finally {
      await own.stop();
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('answers unavailable, naming the socket, when no sandbox listens', async () => {
    const socket = join(dir, 'nobody-here.sock');
    const outcome = await checkHAProxyConfig([file('haproxy.cfg', validConfig)], { socket });
    expect(outcome).toMatchObject({ ok: false, failure: 'unavailable' });
    expect(outcome.ok ? '' : outcome.message).toContain(
      `The check sandbox at ${socket} cannot be reached`,
    );
  });
});

describe('check sandbox limits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-sandbox-limits-'));
  // Answered at the time limit (--time-limit=2) at the latest, with 3 s for a loaded machine.
  const answeredWithinMs = 2_000 + 3_000;
  let sandbox: LocalSandbox;

  beforeAll(async () => {
    sandbox = await startLocalSandbox({
      dir,
      extraArgs: ['--time-limit=2', '--memory-limit=128', '--max-concurrent=1', '--max-waiting=1'],
    });
  });

  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops an endless loop at the time limit', async () => {
    const started = Date.now();
    const outcome = await checkHAProxyConfig(luaConfig('while true do end\n'), {
      socket: sandbox.socket,
    });
    expect(outcome).toEqual({
      ok: false,
      failure: 'unavailable',
      message: 'haproxy -c did not finish within 2000 ms and was stopped.',
    });
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);
  });

  it('stops a memory bomb at the memory limit', async () => {
    const started = Date.now();
    const outcome = await checkHAProxyConfig(
      luaConfig('local t = {}\nfor i = 1, 1e9 do t[i] = string.rep("x", 4096) .. i end\n'),
      { socket: sandbox.socket },
    );
    expect(outcome).toMatchObject({ ok: false, failure: 'rejected' });
    expect(outcome.ok ? '' : outcome.message).toMatch(
      /^\[ALERT\] haproxy\.cfg:\d+: 'lua-load' ran out of memory within the check limits$/m,
    );
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);
  });

  it('answers busy beyond the running and waiting checks', async () => {
    const loop = luaConfig('while true do end\n');
    const outcomes = await Promise.all(
      [0, 1, 2].map(() => checkHAProxyConfig(loop, { socket: sandbox.socket })),
    );
    const messages = outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.message)).sort();
    expect(messages).toEqual([
      'The check sandbox is busy (1 checks run, 1 wait in the delivery lane); try again.',
      'haproxy -c did not finish within 2000 ms and was stopped.',
      'haproxy -c did not finish within 2000 ms and was stopped.',
    ]);
  });
});
