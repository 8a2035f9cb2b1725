/** `haptic certificates status`: commander wiring only (see certificates-status-run.ts). */
import { type Command, Option } from 'commander';
import { parseDuration } from '../certs/duration-text.ts';

interface StatusFlags {
  readonly namespace: string;
  readonly release: string;
  readonly within: string;
  readonly output: 'table' | 'json';
  readonly kubeconfig?: string;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Adds `certificates status` under `certificates`. */
export function addStatus(certificates: Command): void {
  certificates
    .command('status')
    .description(
      'per Pod of both Deployments: the CAs and certificate it has loaded for the mTLS link, whether they equal the Secrets, previous CA, last exchange; exit 0 when every Pod converged and is valid beyond --within, 1 otherwise, 2 on usage or connection errors',
    )
    .option('-n, --namespace <namespace>', 'namespace of the release', 'haptic')
    .option('--release <name>', 'Helm release name', 'haptic')
    .option(
      '--within <duration>',
      'fail when a loaded certificate expires within this (30d, 720h, 1d12h)',
      '30d',
    )
    .addOption(
      new Option('-o, --output <format>', 'table or json')
        .choices(['table', 'json'])
        .default('table'),
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .action(async (flags: StatusFlags, command: Command) => {
      const usage = (problem: string): never =>
        command.error(`error: ${problem}`, { exitCode: 2, code: 'haptic.usage' });
      const withinMs = parseDuration(flags.within);
      if (withinMs === undefined)
        usage(`--within must be a duration such as 30d or 720h, not "${flags.within}"`);
      if (!dnsLabel.test(flags.namespace) || flags.namespace.length > 63)
        usage(`--namespace must be a namespace name such as haptic, not "${flags.namespace}"`);
      if (!dnsLabel.test(flags.release) || flags.release.length > 53)
        usage(`--release must be a Helm release name such as haptic, not "${flags.release}"`);
      const { runStatusCommand } = await import('./certificates-status-run.ts');
      process.exitCode = await runStatusCommand({
        namespace: flags.namespace,
        release: flags.release,
        within: flags.within,
        withinMs: withinMs ?? 0,
        output: flags.output,
        kubeconfig: flags.kubeconfig,
      });
    });
}
