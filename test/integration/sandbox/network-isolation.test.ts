/**
 * The check sandbox sends nothing over the network (src/sandbox/network-isolation.ts): HAProxy
 * resolves the names a configuration holds while `haproxy -c` parses it, so a check that could
 * reach a DNS server would hand it other tenants' host names.
 *
 * - Each isolation, as the sandbox runs it, around a probe that sends a DNS query to a UDP
 *   listener of this test and connects to a TCP server of it: nothing arrives, the probe is
 *   told the network is unreachable; the same probe without isolation reaches both (the
 *   control).
 * - The sandbox with each isolation: a valid set passes, a server named by a host name is
 *   rejected as not resolving (and, under the egress guard of `make test`, no query leaves);
 *   without the helper and with `--network-isolation=seccomp` it does not start.
 */
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { type CheckFile, checkHAProxyConfig } from '../../../src/sandbox/check-client.ts';
import { checkPath } from '../../../src/sandbox/haproxy-check-run.ts';
import { namespaceCommand } from '../../../src/sandbox/network-isolation.ts';
import { eventually } from '../../support/eventually.ts';

const helper = join(projectRoot, '.tools/bin/haptic-no-network');

const isolations = {
  seccomp: [helper, '--'],
  namespace: namespaceCommand,
} as const;

/** A DNS query for probe.example to 127.0.0.1:udpPort (c-ares), then a TCP connection. */
const probeScript = `
const dns = require('node:dns');
const net = require('node:net');
const [udpPort, tcpPort] = process.argv.slice(1).map(Number);
const settle = (promise) => promise.then(() => 'ok', (error) => error.code ?? String(error));
(async () => {
  const resolver = new dns.promises.Resolver({ timeout: 300, tries: 1 });
  resolver.setServers(['127.0.0.1:' + udpPort]);
  const resolve = await settle(resolver.resolve4('probe.example'));
  const connect = await settle(new Promise((done, fail) => {
    const socket = net.connect(tcpPort, '127.0.0.1', () => { socket.destroy(); done(); });
    socket.on('error', fail);
  }));
  process.stdout.write(JSON.stringify({ resolve, connect }));
})();
`;

interface ProbeResult {
  readonly datagrams: number;
  readonly connections: number;
  readonly outcome: { readonly resolve: string; readonly connect: string };
}

const marker = 'marker';

/**
 * Runs the probe behind `isolation` (nothing for the control) and counts what arrived. Once the
 * probe has exited, this process sends a marker datagram and opens a marker connection: each
 * listener handles them after anything the probe sent it, so once both arrived, the counts
 * are final.
 */
async function probe(isolation: readonly string[]): Promise<ProbeResult> {
  const udp = createSocket('udp4');
  const datagrams: string[] = [];
  udp.on('message', (message) => {
    datagrams.push(message.toString('latin1'));
  });
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  // Connections by the client's port.
  const connections: number[] = [];
  const tcp = createServer((socket) => {
    connections.push(socket.remotePort ?? 0);
    socket.destroy();
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const sender = createSocket('udp4');
  try {
    const udpPort = udp.address().port;
    const tcpPort = (tcp.address() as AddressInfo).port;
    const ports = [udpPort, tcpPort].map(String);
    const [command = '', ...args] = [...isolation, process.execPath, '-e', probeScript, ...ports];
    const run = await execa(command, args, {
      env: { PATH: checkPath },
      extendEnv: false,
      reject: false,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    await new Promise<void>((resolve, reject) => {
      sender.send(marker, udpPort, '127.0.0.1', (error) => {
        if (error === null) resolve();
        else reject(error);
      });
    });
    const markerPort = await new Promise<number>((resolve, reject) => {
      const socket = connect(tcpPort, '127.0.0.1', () => {
        resolve(socket.localPort ?? 0);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    await eventually(
      'the marker datagram and connection arrive after the probe',
      () => Promise.resolve({ datagrams, connections }),
      (arrived) => arrived.datagrams.includes(marker) && arrived.connections.includes(markerPort),
      5_000,
    );
    return {
      datagrams: datagrams.filter((datagram) => datagram !== marker).length,
      connections: connections.filter((port) => port !== markerPort).length,
      outcome: JSON.parse(run.stdout) as ProbeResult['outcome'],
    };
  } finally {
    sender.close();
    udp.close();
    tcp.close();
  }
}

describe('network isolation of the check sandbox', () => {
  it('the probe reaches the listeners without isolation (control)', async () => {
    const control = await probe([]);
    expect(control.datagrams).toBeGreaterThan(0);
    expect(control.connections).toBe(1);
    expect(control.outcome.connect).toBe('ok');
  });

  it.each(Object.entries(isolations))(
    '%s: no DNS query and no connection leave, the network is unreachable',
    async (_kind, isolation) => {
      const isolated = await probe(isolation);
      expect(isolated).toEqual({
        datagrams: 0,
        connections: 0,
        outcome: { resolve: expect.any(String) as unknown, connect: 'ENETUNREACH' },
      });
      expect(isolated.outcome.resolve).not.toBe('ok');
    },
  );
});

const validConfig = `global
  maxconn 100
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 5s
frontend web
  bind :8080
  default_backend app
backend app
  server app 127.0.0.1:9000
`;

function file(path: string, content: string): CheckFile {
  return { path, content: Buffer.from(content) };
}

describe('the check sandbox with each network isolation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'haptic-isolation-test-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(Object.keys(isolations))(
    '%s: passes a valid set, and rejects a server named by a host name as not resolving',
    async (kind) => {
      const sandbox = await startLocalSandbox({
        dir: join(dir, kind),
        extraArgs: [`--network-isolation=${kind}`],
      });
      try {
        expect(readFileSync(sandbox.logFile, 'utf8')).toContain(`"networkIsolation":"${kind}"`);
        expect(await checkHAProxyConfig([file('haproxy.cfg', validConfig)], sandbox)).toEqual({
          ok: true,
        });
        const named = validConfig.replace('127.0.0.1:9000', 'tenant-a.probe.example:80');
        expect(await checkHAProxyConfig([file('haproxy.cfg', named)], sandbox)).toEqual({
          ok: false,
          failure: 'rejected',
          message: expect.stringMatching(
            /haproxy\.cfg:12: 'server' names a host that does not resolve/,
          ) as unknown,
        });
      } finally {
        await sandbox.stop();
      }
    },
  );

  it('does not start when the isolation asked for is not there', async () => {
    const path = process.env.PATH;
    // The helper is looked up on the sandbox's PATH, which it takes from this process.
    process.env.PATH = checkPath;
    try {
      await expect(
        startLocalSandbox({
          dir: join(dir, 'missing'),
          extraArgs: ['--network-isolation=seccomp'],
        }),
      ).rejects.toThrow(/did not start/);
    } finally {
      process.env.PATH = path;
    }
    expect(readFileSync(join(dir, 'missing', 'sandbox.log'), 'utf8')).toContain(
      'haproxy -c cannot be cut off from the network, so the check sandbox does not start (seccomp: haptic-no-network is not on PATH',
    );
  });
});
