/**
 * `haptic run`: the controller (commander wiring only). Flags match the chart's
 * haptic-controller Deployment.
 */
import { hostname } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ListenAddress } from '../net/listen-address.ts';
import { type LoadBalancerAddress, parseStatusAddresses } from '../controller/status/ingress-status.ts';
import { defaultCheckSocket } from '../sandbox/sandbox-protocol.ts';
import { type IdentityFlags, addIdentityOptions, identityOverrides } from './identity-options.ts';
import {
  cidrList,
  listenAddress,
  nonEmptyCidrList,
  positiveInteger,
  seconds,
  trueOrFalse,
} from './option-parsers.ts';
import { defaultModelBudgets } from '../controller/routing/model-budgets.ts';

const mebibyte = 1024 * 1024;

interface RunFlags extends IdentityFlags {
  readonly namespace: string;
  readonly release: string;
  readonly ingressClass: string;
  readonly templateConfig: string;
  readonly agentSelector?: string;
  readonly agentPort: number;
  readonly ownPodSelector?: string;
  readonly podCidrs?: readonly string[];
  readonly allowedEndpointCidrs: readonly string[];
  readonly tlsDir: string;
  readonly legacyBasicAuth?: boolean;
  readonly webhookCertDir?: string;
  readonly webhookClientCaDir?: string;
  readonly webhookListen: ListenAddress;
  readonly healthListen: ListenAddress;
  readonly metricsListen: ListenAddress;
  readonly defaultSslCertificate?: string;
  readonly leaderElectionLease: string;
  readonly leaderElectionId: string;
  readonly leaseDuration: number;
  readonly agentSyncInterval: number;
  readonly tlsPollInterval: number;
  readonly kubeconfig?: string;
  readonly checkSocket: string;
  readonly fqdnEndpoints: boolean;
  readonly serverSlotsPerNamespace: number;
  readonly serverSlots: number;
  readonly certificateMibPerNamespace: number;
  readonly certificateMib: number;
  readonly publishService?: string;
  readonly publishStatusAddress?: readonly LoadBalancerAddress[];
  readonly logLevel: string;
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d{1,5}$/.test(value) || number < 1 || number > 65535) {
    throw new InvalidArgumentError('must be a port from 1 to 65535.');
  }
  return number;
}

function objectName(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value)) {
    throw new InvalidArgumentError('must be a Kubernetes object name.');
  }
  return value;
}

function namespacedName(value: string): string {
  const [namespace = '', name = '', extra] = value.split('/');
  if (extra !== undefined || namespace === '' || name === '') {
    throw new InvalidArgumentError('must be namespace/name.');
  }
  objectName(namespace);
  objectName(name);
  return value;
}

function statusAddresses(value: string): LoadBalancerAddress[] {
  const parsed = parseStatusAddresses(value);
  if (typeof parsed === 'string') throw new InvalidArgumentError(parsed);
  return parsed;
}

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
  addIdentityOptions(program.command('run'))
    .description(
      'the controller: watch Ingresses and the HAProxyTemplateConfig, render, lint and check HAProxy configuration, deliver it to every agent over mTLS (leader only); serve the webhook, health and metrics',
    )
    .option(
      '-n, --namespace <namespace>',
      'namespace of the release (Lease, HAProxyTemplateConfig, agent Pods); default POD_NAMESPACE or haptic',
      process.env.POD_NAMESPACE ?? 'haptic',
    )
    .option('--release <name>', "Helm release, for the webhook's Secret rules", 'haptic')
    .option(
      '--ingress-class <name>',
      'IngressClass whose Ingresses are served',
      objectName,
      'haptic',
    )
    .option(
      '--template-config <name>',
      'HAProxyTemplateConfig in --namespace to render',
      objectName,
      'haptic',
    )
    .option(
      '--agent-selector <selector>',
      'label selector of the haptic-haproxy Pods (agents at Pod IP and --agent-port)',
    )
    .addOption(
      new Option('--agent-port <port>', 'agent management port').argParser(port).default(5555),
    )
    .option(
      '--own-pod-selector <selector>',
      "label selector of the release's own Pods in --namespace (HAProxy and the controller), whose addresses no backend may use; default --agent-selector",
    )
    .addOption(
      new Option(
        '--pod-cidrs <list>',
        "the cluster's Pod CIDRs (comma-separated), where endpoints may be; default the Nodes' spec.podCIDRs (watched)",
      ).argParser(nonEmptyCidrList),
    )
    .addOption(
      new Option(
        '--allowed-endpoint-cidrs <list>',
        'further CIDRs (comma-separated) endpoints may use besides the Pod CIDRs, e.g. the Service range or hosts outside the cluster',
      )
        .argParser(cidrList)
        .default([], 'none'),
    )
    .option(
      '--tls-dir <dir>',
      'mounted controller identity: tls.crt, tls.key, ca.crt, previous-ca.*',
      '/etc/haptic/agent-tls',
    )
    .option(
      '--legacy-basic-auth',
      'plain HTTP with Basic authentication (DATAPLANE_USERNAME/PASSWORD) instead of mTLS',
    )
    .option(
      '--webhook-cert-dir <dir>',
      'serving certificate of the admission webhook; without it no webhook is served',
    )
    .option(
      '--webhook-client-ca-dir <dir>',
      "directory whose ca.crt holds the CAs of the API server's webhook client certificate; with it the webhook refuses every caller without one (TLS handshake)",
    )
    .addOption(
      new Option('--webhook-listen <address>', 'admission webhook address')
        .argParser(listenAddress)
        .default(listenAddress(':9443'), ':9443'),
    )
    .addOption(
      new Option('--health-listen <address>', '/healthz and /readyz address')
        .argParser(listenAddress)
        .default(listenAddress(':8080'), ':8080'),
    )
    .addOption(
      new Option('--metrics-listen <address>', 'Prometheus /metrics address')
        .argParser(listenAddress)
        .default(listenAddress(':9090'), ':9090'),
    )
    .option(
      '--default-ssl-certificate <namespace/name>',
      'TLS Secret of the default frontend certificate',
      namespacedName,
    )
    .option(
      '--leader-election-lease <name>',
      'Lease in --namespace that elects the delivering replica',
      objectName,
      'haptic-controller',
    )
    .option(
      '--leader-election-id <id>',
      "this replica's identity in the Lease; default POD_NAME or the host name",
      process.env.POD_NAME ?? hostname(),
    )
    .addOption(
      new Option(
        '--lease-duration <seconds>',
        'Lease duration; a stopped leader is replaced within it plus 2 s',
      )
        .argParser(seconds)
        .default(15_000, '15'),
    )
    .addOption(
      new Option(
        '--agent-sync-interval <seconds>',
        "how often every agent's files are compared with the desired ones",
      )
        .argParser(seconds)
        .default(10_000, '10'),
    )
    .addOption(
      new Option('--tls-poll-interval <seconds>', 'fallback polling of --tls-dir')
        .argParser(seconds)
        .default(10_000, '10'),
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, or in-cluster)',
    )
    .option(
      '--check-socket <path>',
      'Unix socket of the check sandbox (haptic sandbox serve) that runs every haproxy -c',
      defaultCheckSocket,
    )
    .addOption(
      new Option(
        '--fqdn-endpoints <true|false>',
        'serve endpoints of FQDN EndpointSlices (resolved here; the addresses are checked as any endpoint: loopback, link-local, unspecified, multicast, own Pods and addresses outside the Pod and allowed CIDRs refused); false: leave every FQDN endpoint out with an Event',
      )
        .argParser(trueOrFalse)
        .default(true, 'true'),
    )
    .addOption(
      new Option(
        '--server-slots-per-namespace <n>',
        "server slots one namespace's backends may take (a Service of 4,096 endpoints takes 8,192); over it the newest backends are left without endpoints (503) with a BudgetExceeded Event",
      )
        .argParser(positiveInteger)
        .default(defaultModelBudgets.serverSlotsPerNamespace),
    )
    .addOption(
      new Option(
        '--server-slots <n>',
        'server slots all backends together may take (each ~4 KiB in every HAProxy process)',
      )
        .argParser(positiveInteger)
        .default(defaultModelBudgets.serverSlots),
    )
    .addOption(
      new Option(
        '--certificate-mib-per-namespace <n>',
        "MiB of certificate files one namespace's TLS Secrets may take; over it the newest Secrets' hosts get the default certificate with a BudgetExceeded Event",
      )
        .argParser(positiveInteger)
        .default(defaultModelBudgets.certificateBytesPerNamespace / mebibyte),
    )
    .addOption(
      new Option(
        '--certificate-mib <n>',
        'MiB of certificate files all TLS Secrets together may take',
      )
        .argParser(positiveInteger)
        .default(defaultModelBudgets.certificateBytes / mebibyte),
    )
    .option(
      '--publish-service <namespace/name>',
      'Service in front of HAProxy whose address (load-balancer ingress, else external IPs, else cluster IP) served Ingresses carry in status.loadBalancer; without it and --publish-status-address, Ingress status is left alone',
      namespacedName,
    )
    .option(
      '--publish-status-address <list>',
      'IP addresses or DNS names (comma-separated) served Ingresses carry in status.loadBalancer, instead of the address of --publish-service',
      statusAddresses,
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
        .default('info'),
    )
    .action(async (flags: RunFlags, command: Command) => {
      process.exitCode = await run(flags, command);
    });
}
