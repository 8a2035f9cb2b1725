/** `haptic certificates renew` and `haptic certificates check`: commander wiring only. */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../certs/duration-text.ts';
import { defaultDeployments } from '../certs/expiry-sources.ts';
import { parseUtcTimestamp } from '../secrets/utc-timestamp.ts';
import { addRotateCa } from './certificates-rotate-ca-command.ts';
import { addStatus } from './certificates-status-command.ts';
import { addWebhook } from './certificates-webhook-command.ts';

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function kubernetesName(value: string): string {
  if (value.length > 253 || !dns1123Subdomain.test(value)) {
    throw new InvalidArgumentError('must be a lower-case DNS-1123 name such as haptic-agent-ca.');
  }
  return value;
}

function dnsName(value: string): string {
  if (value.length > 253 || !dns1123Subdomain.test(value.toLowerCase())) {
    throw new InvalidArgumentError('must be a DNS name such as haptic-agent.');
  }
  return value;
}

function wholeNumber(value: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError('must be a whole number.');
  return Number(value);
}

function timestamp(value: string): Date {
  const date = parseUtcTimestamp(value);
  if (date === undefined) {
    throw new InvalidArgumentError('must be an RFC 3339 UTC time such as 2030-03-01T12:00:00Z.');
  }
  return date;
}

function waitDuration(value: string): number {
  const ms = value.trim() === '0' ? 0 : parseDuration(value);
  if (ms === undefined)
    throw new InvalidArgumentError('must be a duration such as 30s or 2m, or 0 to not wait.');
  return ms;
}

function repeatable(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), kubernetesName(value)];
}

interface RenewFlags {
  readonly namespace: string;
  readonly issuerSecret: string;
  readonly serverSecret: string;
  readonly clientSecret: string;
  readonly serverName: string;
  readonly clientName: string;
  readonly validityDays: number;
  readonly convergenceTimeout?: number;
  readonly kubeconfig?: string;
  readonly now?: Date;
  readonly exitAfterWrites?: number;
}

interface CheckFlags {
  readonly namespace: string;
  readonly deployment?: readonly string[];
  readonly within: string;
  readonly output: 'text' | 'json';
  readonly kubeconfig?: string;
  readonly now?: Date;
}

function usage(command: Command, problem: string): never {
  command.error(`error: ${problem}`, { exitCode: 2, code: 'haptic.usage' });
}

function addRenew(certificates: Command): void {
  certificates
    .command('renew')
    .description(
      'create or renew the agent CA and both identity Secrets (default provider); exit 0 when done or nothing is due, 1 on refusal',
    )
    .option(
      '-n, --namespace <namespace>',
      'namespace of the three Secrets',
      kubernetesName,
      'haptic',
    )
    .option(
      '--issuer-secret <name>',
      'issuer Secret: CA, key, generation, rotation state',
      kubernetesName,
      'haptic-agent-ca',
    )
    .option(
      '--server-secret <name>',
      'agent (server) identity Secret',
      kubernetesName,
      'haptic-agent-server-tls',
    )
    .option(
      '--client-secret <name>',
      'controller (client) identity Secret',
      kubernetesName,
      'haptic-agent-client-tls',
    )
    .option('--server-name <dns>', 'DNS SAN of the agent certificate', dnsName, 'haptic-agent')
    .option(
      '--client-name <dns>',
      'DNS SAN of the controller certificate',
      dnsName,
      'haptic-controller',
    )
    .option('--validity-days <days>', 'lifetime of anything issued next', wholeNumber, 365)
    .option(
      '--convergence-timeout <duration>',
      "during a CA rotation's overlap, how long to wait for every replica to report the new CA before leaving the clean-up to the deadline; 0 reads the reports once (default: 2m)",
      waitDuration,
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .addOption(
      new Option('--now <time>', 'judge and issue at this time (testing)')
        .argParser(timestamp)
        .hideHelp(),
    )
    .addOption(
      new Option('--exit-after-writes <n>', 'kill the run after n writes (fault injection)')
        .argParser(wholeNumber)
        .hideHelp(),
    )
    .action(renew);
}

/** `certificates renew` with its flags checked together. */
async function renew(flags: RenewFlags, command: Command): Promise<void> {
  const names = new Set([flags.issuerSecret, flags.serverSecret, flags.clientSecret]);
  if (names.size !== 3)
    usage(
      command,
      '--issuer-secret, --server-secret and --client-secret must name three different Secrets',
    );
  if (flags.serverName.toLowerCase() === flags.clientName.toLowerCase()) {
    usage(
      command,
      '--server-name and --client-name must differ, so neither identity can act as the other',
    );
  }
  // Implementations load on use, so every command starts quickly.
  const { runRenewCommand } = await import('../certs/renew-command.ts');
  process.exitCode = await runRenewCommand({
    secrets: {
      namespace: flags.namespace,
      issuer: flags.issuerSecret,
      server: flags.serverSecret,
      client: flags.clientSecret,
    },
    names: { server: flags.serverName, client: flags.clientName },
    validityDays: flags.validityDays,
    convergenceTimeoutMs: flags.convergenceTimeout,
    kubeconfig: flags.kubeconfig,
    now: flags.now,
    exitAfterWrites: flags.exitAfterWrites,
  });
}

function addCheck(certificates: Command): void {
  certificates
    .command('check')
    .description(
      'print the expiry of tls.crt and ca.crt of each identity Secret; exit 1 if one expires within the window or cannot be read',
    )
    .argument(
      '[secrets...]',
      'identity Secrets (default: the agent-tls volumes of the Deployments)',
    )
    .option(
      '-n, --namespace <namespace>',
      'namespace of the Secrets and Deployments',
      kubernetesName,
      'haptic',
    )
    .option(
      '--deployment <name>',
      `Deployment whose agent-tls volume names a Secret, repeatable (default: ${defaultDeployments.join(', ')})`,
      repeatable,
    )
    .option(
      '--within <duration>',
      'fail when a certificate expires within this (30d, 720h, 1d12h)',
      '30d',
    )
    .addOption(
      new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'),
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .addOption(
      new Option('--now <time>', 'judge at this time (testing)').argParser(timestamp).hideHelp(),
    )
    .action(async (secrets: string[], flags: CheckFlags, command: Command) => {
      const withinMs = parseDuration(flags.within);
      if (withinMs === undefined)
        usage(command, `--within must be a duration such as 30d or 720h, not "${flags.within}"`);
      const invalid = secrets.find((name) => !dns1123Subdomain.test(name));
      if (invalid !== undefined) usage(command, `"${invalid}" is not a Secret name`);
      const { runCheckCommand } = await import('../certs/check-command.ts');
      process.exitCode = await runCheckCommand({
        namespace: flags.namespace,
        secrets,
        deployments: flags.deployment ?? defaultDeployments,
        within: flags.within,
        withinMs,
        output: flags.output,
        kubeconfig: flags.kubeconfig,
        now: flags.now,
      });
    });
}

/** Adds `certificates renew`, `check`, `status`, `rotate-ca` and `webhook` to the program. */
export function registerCertificatesCommand(program: Command): void {
  const certificates = program
    .command('certificates')
    .description(
      "agent certificates: renewal (default provider) and expiry check; the chart's webhook certificate",
    );
  addRenew(certificates);
  addCheck(certificates);
  addStatus(certificates);
  addRotateCa(certificates);
  addWebhook(certificates);
}
