/**
 * `haptic run`: the controller (commander wiring only). Its flags are in run-options.ts.
 */
import type { Command } from 'commander';
import { identityOverrides } from './identity-options.ts';
import { type RunFlags, mebibyte, runCommandWithOptions } from './run-options.ts';

/** Where the address in served Ingresses' status comes from; the fixed list wins. */
function publishStatus(flags: RunFlags) {
  if (flags.publishStatusAddress !== undefined) {
    return { publishStatus: { addresses: flags.publishStatusAddress } };
  }
  if (flags.publishService === undefined) return {};
  const [namespace = '', name = ''] = flags.publishService.split('/');
  return { publishStatus: { service: { namespace, name } } };
}

function usage(command: Command, problem: string): never {
  command.error(`error: ${problem}`, { exitCode: 2, code: 'haptic.usage' });
}

async function run(flags: RunFlags, command: Command): Promise<number> {
  let transport;
  if (flags.legacyBasicAuth === true) {
    const username = process.env.DATAPLANE_USERNAME ?? '';
    const password = process.env.DATAPLANE_PASSWORD ?? '';
    if (username === '' || password === '') {
      usage(
        command,
        '--legacy-basic-auth needs DATAPLANE_USERNAME and DATAPLANE_PASSWORD in the environment',
      );
    }
    transport = { mode: 'legacy-basic-auth', username, password } as const;
  } else {
    const serverName = process.env.AGENT_TLS_SERVER_NAME ?? '';
    if (serverName === '') {
      usage(
        command,
        "AGENT_TLS_SERVER_NAME must name the DNS SAN of the agents' certificates (the chart sets it)",
      );
    }
    transport = { mode: 'mtls', tlsDir: flags.tlsDir, serverName } as const;
  }
  if (flags.agentSelector === undefined) {
    usage(command, 'name the agents: --agent-selector (the label selector of their Pods)');
  }
  const { runController } = await import('../controller/controller-process.ts');
  return runController(
    {
      namespace: flags.namespace,
      release: flags.release,
      ingressClass: flags.ingressClass,
      templateConfig: flags.templateConfig,
      agents: { selector: flags.agentSelector, port: flags.agentPort },
      ...(flags.ownPodSelector === undefined ? {} : { ownPodSelector: flags.ownPodSelector }),
      endpointRanges: {
        ...(flags.podCidrs === undefined ? {} : { podCIDRs: flags.podCidrs }),
        allowedCIDRs: flags.allowedEndpointCidrs,
      },
      transport,
      ...(flags.defaultSslCertificate === undefined
        ? {}
        : { defaultCertificate: flags.defaultSslCertificate }),
      leaseName: flags.leaderElectionLease,
      identity: flags.leaderElectionId,
      ...(flags.webhookCertDir === undefined
        ? {}
        : {
            webhook: {
              certDir: flags.webhookCertDir,
              ...(flags.webhookClientCaDir === undefined
                ? {}
                : { clientCaDir: flags.webhookClientCaDir }),
              listen: flags.webhookListen,
              identityOverrides: identityOverrides(flags),
            },
          }),
      health: flags.healthListen,
      metrics: flags.metricsListen,
      syncIntervalMs: flags.agentSyncInterval,
      leaseDurationMs: flags.leaseDuration,
      tlsPollIntervalMs: flags.tlsPollInterval,
      checkSocket: flags.checkSocket,
      fqdnEndpoints: flags.fqdnEndpoints,
      budgets: {
        serverSlotsPerNamespace: flags.serverSlotsPerNamespace,
        serverSlots: flags.serverSlots,
        certificateBytesPerNamespace: flags.certificateMibPerNamespace * mebibyte,
        certificateBytes: flags.certificateMib * mebibyte,
      },
      ...publishStatus(flags),
    },
    {
      logLevel: flags.logLevel,
      ...(flags.kubeconfig === undefined ? {} : { kubeconfig: flags.kubeconfig }),
    },
  );
}

export function registerRunCommand(program: Command): void {
  runCommandWithOptions(program).action(async (flags: RunFlags, command: Command) => {
    process.exitCode = await run(flags, command);
  });
}
