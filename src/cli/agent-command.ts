/** `haptic agent`, `haptic agent health` and `haptic agent state`: commander wiring only. */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ListenAddress } from '../net/listen-address.ts';
import { defaultApplyLimits } from '../agent-api/apply-request.ts';
import { defaultCheckSocket } from '../sandbox/sandbox-protocol.ts';
import { listenAddress, seconds } from './option-parsers.ts';

const defaultLocalSocket = '/var/run/haptic/agent.sock';
const dnsName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function clientName(value: string): string {
  if (value.length > 253 || !dnsName.test(value.toLowerCase())) {
    throw new InvalidArgumentError('must be a DNS name such as haptic-controller.');
  }
  return value;
}

interface AgentFlags {
  readonly listen: ListenAddress;
  readonly tlsDir: string;
  readonly tlsClientName?: string;
  readonly legacyBasicAuth?: boolean;
  readonly baseDir: string;
  readonly masterSocket: string;
  readonly localSocket: string;
  readonly stateFile: string;
  readonly checkSocket: string;
  readonly reloadTimeout: number;
  readonly tlsPollInterval: number;
  readonly shutdownGrace: number;
  readonly logLevel: string;
}

function usage(command: Command, problem: string): never {
  command.error(`error: ${problem}`, { exitCode: 2, code: 'haptic.usage' });
}

function transportOf(flags: AgentFlags, command: Command) {
  if (flags.legacyBasicAuth === true) {
    if (flags.tlsClientName !== undefined) {
      usage(
        command,
        '--legacy-basic-auth and --tls-client-name exclude each other; choose one mode',
      );
    }
    const username = process.env.DATAPLANE_USERNAME ?? '';
    const password = process.env.DATAPLANE_PASSWORD ?? '';
    if (username === '' || password === '') {
      usage(
        command,
        '--legacy-basic-auth needs DATAPLANE_USERNAME and DATAPLANE_PASSWORD in the environment',
      );
    }
    return { mode: 'legacy-basic-auth', username, password } as const;
  }
  if (flags.tlsClientName === undefined) {
    usage(
      command,
      '--tls-client-name is required: the DNS SAN of the controller certificate the agent accepts',
    );
  }
  return {
    mode: 'mtls',
    tlsDir: flags.tlsDir,
    clientName: flags.tlsClientName,
    pollIntervalMs: flags.tlsPollInterval,
  } as const;
}

/** The management API: where it listens and how callers authenticate. */
function addApiOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--listen <address>', 'management API address')
        .argParser(listenAddress)
        .default(listenAddress(':5555'), ':5555'),
    )
    .option(
      '--tls-dir <dir>',
      'mounted agent identity: tls.crt, tls.key, ca.crt, previous-ca.*',
      '/etc/haptic/agent-tls',
    )
    .option('--tls-client-name <dns>', 'DNS SAN the controller certificate must carry', clientName)
    .option(
      '--legacy-basic-auth',
      'plain HTTP with Basic authentication (DATAPLANE_USERNAME/PASSWORD) instead of mTLS',
    )
    .option(
      '--base-dir <dir>',
      'directory HAProxy reads its configuration from',
      '/etc/haproxy/haptic',
    );
}

/** HAProxy's files and sockets, the check sandbox, and timing. */
function addHAProxyOptions(command: Command): Command {
  return command
    .option(
      '--master-socket <path>',
      "HAProxy's master socket (haproxy -W -S)",
      '/var/run/haproxy/master.sock',
    )
    .option('--local-socket <path>', 'Unix socket for health and state', defaultLocalSocket)
    .option(
      '--state-file <path>',
      'record of the last applied configuration',
      '/var/lib/haptic/state.json',
    )
    .option(
      '--check-socket <path>',
      'Unix socket of the check sandbox (haptic sandbox serve) for haproxy -c messages of rejected configurations',
      defaultCheckSocket,
    )
    .addOption(
      new Option(
        '--reload-timeout <seconds>',
        'longest wait for HAProxy to run a new configuration',
      )
        .argParser(seconds)
        .default(60_000, '60'),
    )
    .addOption(
      new Option('--tls-poll-interval <seconds>', 'fallback polling of --tls-dir')
        .argParser(seconds)
        .default(10_000, '10'),
    )
    .addOption(
      new Option('--shutdown-grace <seconds>', 'time in-flight requests get at shutdown')
        .argParser(seconds)
        .default(30_000, '30'),
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
        .default('info'),
    );
}

export function registerAgentCommand(program: Command): void {
  const agent = program
    .command('agent')
    .description(
      'the agent beside HAProxy: mTLS management API, file apply, reload through the master socket',
    );
  addHAProxyOptions(addApiOptions(agent));
  agent.action(async (flags: AgentFlags, command: Command) => {
    // Implementations load on use, so every command starts quickly.
    const { runAgentProcess } = await import('../agent/agent-process.ts');
    process.exitCode = await runAgentProcess(
      {
        listen: flags.listen,
        transport: transportOf(flags, command),
        baseDir: flags.baseDir,
        masterSocket: flags.masterSocket,
        localSocket: flags.localSocket,
        stateFile: flags.stateFile,
        checkSocket: flags.checkSocket,
        reloadTimeoutMs: flags.reloadTimeout,
        limits: defaultApplyLimits,
        shutdownGraceMs: flags.shutdownGrace,
      },
      flags.logLevel,
    );
  });
  addLocalCommands(agent);
}

/** `haptic agent health` and `haptic agent state`, which ask the local socket. */
function addLocalCommands(agent: Command): void {
  // `--local-socket` after `health` or `state` is parsed by `agent` itself (commander reads a
  // parent's options anywhere), so the subcommands read it from there.
  agent
    .command('health')
    .description(
      "exit 0 while the agent process is healthy (asks the local socket; certificates don't matter)",
    )
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the answer')
        .argParser(seconds)
        .default(3_000, '3'),
    )
    .configureHelp({ showGlobalOptions: true })
    .action(async (flags: { timeout: number }, command: Command) => {
      const { runHealthCommand } = await import('../agent/local-commands.ts');
      process.exitCode = await runHealthCommand(localSocketOf(command), flags.timeout);
    });

  agent
    .command('state')
    .description(
      "print the agent's state as JSON: applied configuration, HAProxy processes, TLS material",
    )
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the answer')
        .argParser(seconds)
        .default(10_000, '10'),
    )
    .configureHelp({ showGlobalOptions: true })
    .action(async (flags: { timeout: number }, command: Command) => {
      const { runStateCommand } = await import('../agent/local-commands.ts');
      process.exitCode = await runStateCommand(localSocketOf(command), flags.timeout);
    });
}

function localSocketOf(command: Command): string {
  const { localSocket } = command.optsWithGlobals<{ localSocket?: unknown }>();
  return typeof localSocket === 'string' ? localSocket : defaultLocalSocket;
}
