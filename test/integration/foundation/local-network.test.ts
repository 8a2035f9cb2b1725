import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podCidr, serviceCidr } from '../../../dev/lib/cluster-network.ts';
import { holdUnreachableRoutes } from '../../../dev/lib/local-routes.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';

/** The first address of a range (10.96.0.0/16 → 10.96.0.1). */
function firstAddress(cidr: string): string {
  const [network = ''] = cidr.split('/');
  return network.replace(/\.0$/, '.1');
}

function unreachableRoutes(): string[] {
  const out = spawnSync('ip', ['-o', 'route', 'show', 'type', 'unreachable'], { encoding: 'utf8' });
  return out.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.trim().split(/\s+/)[1] ?? '');
}

/** Connects over TCP; resolves with the error code and how long the attempt took. */
function tryConnect(host: string, port: number): Promise<{ code: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5_000 });
    const done = (code: string): void => {
      socket.destroy();
      resolve({ code, ms: performance.now() - started });
    };
    socket.once('connect', () => {
      done('connected');
    });
    socket.once('timeout', () => {
      done('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      done(error.code ?? error.message);
    });
  });
}

describe('the local cluster never sends a packet off this machine', () => {
  it('routes the Service and Pod ranges unreachable on the host while the node runs', async () => {
    expect(unreachableRoutes()).toEqual(expect.arrayContaining([serviceCidr, podCidr]));
    for (const cidr of [serviceCidr, podCidr]) {
      const attempt = await tryConnect(firstAddress(cidr), 443);
      expect(attempt.code).toBe('EHOSTUNREACH');
      expect(attempt.ms).toBeLessThan(1_000);
    }
  });

  // Inside the node a Service without endpoints is rejected by kube-proxy's rules, and the
  // node's network namespace has no route off this machine.
  it('fails a webhook call through a Service without endpoints at once with "connection refused"', async () => {
    const namespace = await createTestNamespace('egress-webhook');
    const name = `${namespace}-guard`;
    const webhook = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name: 'nowhere.haptic.test',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { service: { name: 'nowhere', namespace, port: 443 } },
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          rules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE'],
              resources: ['configmaps'],
            },
          ],
        },
      ],
    };
    await kubectl(['apply', '-f', '-'], JSON.stringify(webhook));
    try {
      const service = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'nowhere', namespace },
        spec: { ports: [{ port: 443 }] },
      };
      expect((await kubectl(['apply', '-f', '-'], JSON.stringify(service))).exitCode).toBe(0);
      const started = performance.now();
      const result = await kubectl([
        'create',
        'configmap',
        'probe',
        '-n',
        namespace,
        '--dry-run=server',
      ]);
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain('failed calling webhook');
      expect(result.stderr).toContain('connection refused');
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await kubectl(['delete', 'validatingwebhookconfiguration', name]);
    }
  });
});

describe('unreachable route holders', () => {
  const range = '10.243.250.0/24';
  const dir = mkdtempSync(join(tmpdir(), 'routes-'));

  it('keep the routes while one holder of the same ranges lives and remove them with the last', async () => {
    const first = await holdUnreachableRoutes([range], join(dir, 'first.log'), process.pid);
    const second = await holdUnreachableRoutes([range], join(dir, 'second.log'), process.pid);
    await first.stop();
    expect(unreachableRoutes()).toContain(range);
    await second.stop();
    expect(unreachableRoutes()).not.toContain(range);
  });

  it('remove the routes when the owner dies', async () => {
    const owner = spawn('sleep', ['60']);
    const holder = await holdUnreachableRoutes([range], join(dir, 'owned.log'), owner.pid ?? 0);
    expect(unreachableRoutes()).toContain(range);
    owner.kill('SIGKILL');
    await holder.exited;
    expect(unreachableRoutes()).not.toContain(range);
  });
});

describe('the egress guard of the test run', () => {
  // A test host of our own: a network namespace behind a veth pair, outside the cluster's
  // ranges, so the guard must count what is sent to it (and nothing leaves the machine).
  const netns = `haptic-egress-${process.pid}`;
  const hostSide = `hegh${process.pid % 100000}`;
  const nsSide = `hegn${process.pid % 100000}`;
  const target = '10.242.255.2';
  const guard = join(projectRoot, 'dev/egress-guard.ts');
  const ip = (...args: string[]): void => {
    const result = spawnSync('ip', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr}`);
  };

  beforeAll(() => {
    ip('netns', 'add', netns);
    ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
    ip('link', 'set', nsSide, 'netns', netns);
    ip('addr', 'add', '10.242.255.1/30', 'dev', hostSide);
    ip('link', 'set', hostSide, 'up');
    ip('-n', netns, 'addr', 'add', `${target}/30`, 'dev', nsSide);
    ip('-n', netns, 'link', 'set', nsSide, 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
  });

  afterAll(() => {
    spawnSync('ip', ['link', 'del', hostSide]);
    spawnSync('ip', ['netns', 'del', netns]);
  });

  const chains = (): string =>
    spawnSync('iptables', ['-w', '-S'], { encoding: 'utf8' }).stdout +
    spawnSync('ip6tables', ['-w', '-S'], { encoding: 'utf8' }).stdout;

  /** Runs a command under a guard of its own (the suite may run under another one). */
  const guarded = async (script: string) => {
    const run = execa(process.execPath, [guard, '--', 'bash', '-c', script], { reject: false });
    const chain = `HAPTIC-EGRESS-${String(run.pid)}`;
    const result = await run;
    return { exitCode: result.exitCode, stderr: result.stderr, chain };
  };

  it('passes a run that stays on loopback and leaves no rule behind', async () => {
    const result = await guarded('echo x > /dev/udp/127.0.0.1/9');
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('no packet left this machine');
    expect(chains()).not.toContain(result.chain);
  });

  /** A UDP receiver on the test host; resolves once it listens, with what reached it in 3 s. */
  const receiver = async (): Promise<{ readonly heard: Promise<string> }> => {
    const script = [
      'import socket',
      'sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
      `sock.bind(('${target}', 9))`,
      'sock.settimeout(3)',
      "print('ready', flush=True)",
      'try:',
      "    print('received', sock.recv(16))",
      'except socket.timeout:',
      "    print('nothing')",
    ].join('\n');
    const run = execa('ip', ['netns', 'exec', netns, 'python3', '-c', script], { reject: false });
    await new Promise<void>((resolve) => {
      run.stdout.once('data', () => {
        resolve();
      });
    });
    return { heard: run.then((result) => result.stdout) };
  };

  it('fails a run that sent a packet elsewhere, naming the destination, and stops the packet', async () => {
    const received = await receiver();
    const result = await guarded(`echo x > /dev/udp/${target}/9`);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /egress guard: 1 packet\(s\) from the guarded run were addressed off this machine \(the guard stopped them\)/,
    );
    expect(result.stderr).toContain(target);
    expect(chains()).not.toContain(result.chain);
    expect(await received.heard).toBe('ready\nnothing');
  });

  it('has a receiver that hears a packet sent on the test host itself', async () => {
    const received = await receiver();
    await execa('ip', ['netns', 'exec', netns, 'bash', '-c', `echo x > /dev/udp/${target}/9`]);
    expect(await received.heard).toBe("ready\nreceived b'x\\n'");
  });

  it("keeps the command's own failure code", async () => {
    expect((await guarded('exit 3')).exitCode).toBe(3);
  });
});
