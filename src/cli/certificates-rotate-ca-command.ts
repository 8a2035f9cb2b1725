/** `haptic certificates rotate-ca`: commander wiring only (see certificates-rotate-ca-run.ts). */
import type { Command } from 'commander';
import { parseDuration } from '../certs/duration-text.ts';

interface RotateCaFlags {
  readonly namespace: string;
  readonly release: string;
  readonly ca: string;
  readonly agentCert: string;
  readonly agentKey: string;
  readonly controllerCert: string;
  readonly controllerKey: string;
  readonly overlap: string;
  readonly timeout: string;
  readonly dryRun: boolean;
  readonly kubeconfig?: string;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Adds `certificates rotate-ca` under `certificates`. */
export function addRotateCa(certificates: Command): void {
  certificates
    .command('rotate-ca')
    .description(
      "rotate the agent CA of a release with external identity Secrets (haproxy.agent.tls.managed: false) by the guide's stages: distribute overlapping trust, wait, replace identities, wait, verify an mTLS exchange, revoke, wait; resumable; exit 0 when complete, 1 when refused or failed",
    )
    .option('-n, --namespace <namespace>', 'namespace of the release', 'haptic')
    .option('--release <name>', 'Helm release name', 'haptic')
    .requiredOption('--ca <file>', 'the new CA certificate (PEM), e.g. $rotation_dir/ca.crt')
    .requiredOption('--agent-cert <file>', 'the new agent certificate (serverAuth)')
    .requiredOption('--agent-key <file>', 'the new agent private key')
    .requiredOption('--controller-cert <file>', 'the new controller certificate (clientAuth)')
    .requiredOption('--controller-key <file>', 'the new controller private key')
    .option(
      '--overlap <duration>',
      'how long both peers also trust the previous CA (previous-ca-until); above 0, at most 24h',
      '1h',
    )
    .option('--timeout <duration>', 'how long each waiting stage may take', '5m')
    .option('--dry-run', 'print the checks and the plan, write nothing', false)
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .action(async (flags: RotateCaFlags, command: Command) => {
      const usage = (problem: string): never =>
        command.error(`error: ${problem}`, { exitCode: 2, code: 'haptic.usage' });
      const overlapMs = parseDuration(flags.overlap);
      if (overlapMs === undefined)
        usage(`--overlap must be a duration such as 1h or 90m, not "${flags.overlap}"`);
      const timeoutMs = parseDuration(flags.timeout);
      if (timeoutMs === undefined || timeoutMs === 0)
        usage(`--timeout must be a duration such as 5m, not "${flags.timeout}"`);
      if (!dnsLabel.test(flags.namespace) || flags.namespace.length > 63)
        usage(`--namespace must be a namespace name such as haptic, not "${flags.namespace}"`);
      if (!dnsLabel.test(flags.release) || flags.release.length > 53)
        usage(`--release must be a Helm release name such as haptic, not "${flags.release}"`);
      const { runRotateCaCommand } = await import('./certificates-rotate-ca-run.ts');
      process.exitCode = await runRotateCaCommand({
        namespace: flags.namespace,
        release: flags.release,
        files: {
          ca: flags.ca,
          agentCert: flags.agentCert,
          agentKey: flags.agentKey,
          controllerCert: flags.controllerCert,
          controllerKey: flags.controllerKey,
        },
        overlap: flags.overlap,
        overlapMs: overlapMs ?? 0,
        timeout: flags.timeout,
        timeoutMs: timeoutMs ?? 0,
        dryRun: flags.dryRun,
        kubeconfig: flags.kubeconfig,
      });
    });
}
