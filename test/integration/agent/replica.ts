/**
 * One `haptic-haproxy` Pod on loopback: the agent (the real CLI, a child process) and its check
 * sandbox (`haptic sandbox serve`, the config-check sidecar) beside a real HAProxy in
 * master-worker mode, each replica on its own 127.0.x.y address, with the
 * agent-tls volume as a directory in the kubelet's layout. Processes are supervised: they die
 * with the test run, and `stop()` ends them in afterAll.
 *
 * Test files run at once and every replica binds the same ports (sitePorts), so each test file
 * uses addresses no other file uses: HAProxy binds with SO_REUSEPORT, and two files on one
 * address would silently share each other's connections.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../../dev/lib/free-port.ts';
import { type LocalSandbox, startLocalSandbox } from '../../../dev/lib/local-sandbox.ts';
import {
  type SupervisedProcess,
  killGroup,
  startSupervised,
} from '../../../dev/lib/supervised-process.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { sitePorts } from './site.ts';
import { getLocal } from '../../../src/agent/local-client.ts';
import { MasterSocket } from '../../../src/agent/master-socket.ts';
import { eventually } from '../../support/eventually.ts';
import type { AgentEndpoint } from '../../../src/controller/delivery/agent-client.ts';

export const cliPath = join(projectRoot, 'src/cli/main.ts');

export interface ReplicaOptions {
  /** --tls-client-name; omitted in legacy mode. */
  readonly clientName?: string;
  /** Legacy Basic credentials instead of mTLS. */
  readonly legacy?: { readonly username: string; readonly password: string };
}

export class Replica {
  readonly name: string;
  readonly address: string;
  readonly dir: string;
  readonly tlsDir: string;
  readonly baseDir: string;
  readonly masterSocket: string;
  readonly localSocket: string;
  readonly stateFile: string;
  readonly agentLog: string;
  readonly agentPort: number;
  /** Ports the test configurations bind HAProxy to on `address`. */
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly #options: ReplicaOptions;
  #agent: SupervisedProcess | undefined;
  #haproxy: SupervisedProcess | undefined;
  #sandbox: LocalSandbox | undefined;

  private constructor(
    name: string,
    address: string,
    dir: string,
    agentPort: number,
    options: ReplicaOptions,
  ) {
    this.name = name;
    this.address = address;
    this.dir = dir;
    this.tlsDir = join(dir, 'agent-tls');
    this.baseDir = join(dir, 'haproxy-config');
    this.masterSocket = join(dir, 'haproxy-run', 'master.sock');
    this.localSocket = join(dir, 'agent-run', 'agent.sock');
    this.stateFile = join(dir, 'agent-state', 'state.json');
    this.agentLog = join(dir, 'agent.log');
    this.agentPort = agentPort;
    this.httpPort = sitePorts.http;
    this.httpsPort = sitePorts.https;
    this.#options = options;
  }

  static async create(
    root: string,
    name: string,
    address: string,
    options: ReplicaOptions,
  ): Promise<Replica> {
    const dir = join(root, name);
    for (const sub of ['haproxy-run', 'agent-run', 'agent-state'])
      mkdirSync(join(dir, sub), { recursive: true });
    return new Replica(name, address, dir, await freePort(), options);
  }

  endpoint(): AgentEndpoint {
    return { name: this.name, host: this.address, port: this.agentPort };
  }

  /** Starts the agent (and its check sandbox, once) and waits until its local socket answers. */
  async startAgent(): Promise<void> {
    const { clientName, legacy } = this.#options;
    this.#sandbox ??= await startLocalSandbox({ dir: join(this.dir, 'config-check') });
    const args = [
      cliPath,
      'agent',
      `--listen=${this.address}:${this.agentPort}`,
      ...(legacy === undefined
        ? [`--tls-dir=${this.tlsDir}`, `--tls-client-name=${clientName ?? ''}`]
        : ['--legacy-basic-auth']),
      `--base-dir=${this.baseDir}`,
      `--master-socket=${this.masterSocket}`,
      `--local-socket=${this.localSocket}`,
      `--state-file=${this.stateFile}`,
      `--check-socket=${this.#sandbox.socket}`,
      '--tls-poll-interval=1',
      '--shutdown-grace=5',
    ];
    const env = {
      ...process.env,
      ...(legacy === undefined
        ? {}
        : { DATAPLANE_USERNAME: legacy.username, DATAPLANE_PASSWORD: legacy.password }),
    };
    const agent = startSupervised({
      name: `agent ${this.name}`,
      command: process.execPath,
      args,
      logFile: this.agentLog,
      env,
    });
    this.#agent = agent;
    const life = { exited: false };
    void agent.exited.then(() => {
      life.exited = true;
    });
    const healthy = await eventually(
      `agent ${this.name} answers /healthz`,
      async () => {
        if (life.exited) return 'exited';
        const answer = await getLocal(this.localSocket, '/healthz', 1_000);
        return answer.status === 200 ? 'healthy' : `status ${String(answer.status)}`;
      },
      (state) => state === 'healthy' || state === 'exited',
      20_000,
    ).catch(() => 'not healthy');
    if (healthy === 'healthy') return;
    throw new Error(`agent ${this.name} did not become healthy:\n${this.agentLogText()}`);
  }

  /** Stops (SIGSTOP) or continues (SIGCONT) the agent: a stopped agent takes connections but never answers. */
  signalAgent(signal: 'SIGSTOP' | 'SIGCONT'): void {
    const agent = this.#agent;
    if (agent === undefined || !killGroup(agent.pid, signal)) {
      throw new Error(`agent ${this.name} is not running`);
    }
  }

  async stopAgent(): Promise<void> {
    await this.#agent?.stop();
    this.#agent = undefined;
  }

  /** Starts HAProxy as the chart does (-W -db -S), after the agent wrote the bootstrap config. */
  async startHAProxy(): Promise<void> {
    this.#haproxy = startSupervised({
      name: `haproxy ${this.name}`,
      command: 'haproxy',
      // As the chart runs it, plus -C so relative paths resolve in the base directory; each
      // replica binds its own loopback address, taken from the environment.
      args: [
        '-W',
        '-db',
        '-S',
        this.masterSocket,
        '-C',
        this.baseDir,
        '-f',
        join(this.baseDir, 'haproxy.cfg'),
      ],
      logFile: join(this.dir, 'haproxy.log'),
      env: {
        ...process.env,
        HAPTIC_LISTEN_ADDRESS: this.address,
      },
    });
    const master = new MasterSocket(this.masterSocket, 1_000);
    await eventually(
      `HAProxy ${this.name} runs a worker`,
      () => master.command('show proc'),
      (answer) => /\bworker\b/.test(answer),
      20_000,
    ).catch(() => {
      throw new Error(
        `HAProxy ${this.name} did not start:\n${readFileSync(join(this.dir, 'haproxy.log'), 'utf8')}`,
      );
    });
  }

  /** Stops HAProxy, master and workers: its master socket no longer answers. */
  async stopHAProxy(): Promise<void> {
    await this.#haproxy?.stop();
    this.#haproxy = undefined;
  }

  async stop(): Promise<void> {
    await Promise.all([this.stopAgent(), this.#haproxy?.stop(), this.#sandbox?.stop()]);
    this.#haproxy = undefined;
    this.#sandbox = undefined;
  }

  agentLogText(): string {
    try {
      return readFileSync(this.agentLog, 'utf8');
    } catch {
      return '';
    }
  }

  /** The agent's JSON log lines. */
  agentLogLines(): Record<string, unknown>[] {
    return this.agentLogText()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}
