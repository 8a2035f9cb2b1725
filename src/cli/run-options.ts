/**
 * The flags of `haptic run`, in the order `--help` lists them, grouped by what they set.
 * Flags match the chart's haptic-controller Deployment.
 */
import { hostname } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ListenAddress } from '../net/listen-address.ts';
import {
  type LoadBalancerAddress,
  parseStatusAddresses,
} from '../controller/status/ingress-status.ts';
import { defaultModelBudgets } from '../controller/routing/model-budgets.ts';
import { defaultCheckSocket } from '../sandbox/sandbox-protocol.ts';
import { type IdentityFlags, addIdentityOptions } from './identity-options.ts';
import {
  cidrList,
  listenAddress,
  nonEmptyCidrList,
  positiveInteger,
  seconds,
  trueOrFalse,
} from './option-parsers.ts';

/** The flags count certificate budgets in MiB; the model in bytes. */
export const mebibyte = 1024 * 1024;

export interface RunFlags extends IdentityFlags {
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

/** The release: its namespace and name, the IngressClass it serves, its HAProxyTemplateConfig. */
function addReleaseOptions(command: Command): Command {
  return command
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
    );
}

/** The agents: where they are, which endpoints backends may use, how the controller reaches them. */
function addAgentOptions(command: Command): Command {
  return command
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
    );
}

/** What the controller serves: the admission webhook, health and metrics. */
function addServingOptions(command: Command): Command {
  return command
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
    );
}

/** The loop: default certificate, leader election, timing, API access and the check sandbox. */
function addLoopOptions(command: Command): Command {
  return command
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
    );
}

/** What the model admits: FQDN endpoints, and the budgets of a namespace and of all. */
function addModelOptions(command: Command): Command {
  return command
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
    );
}

/** What the controller writes: the Ingresses' status address, and its log level. */
function addStatusOptions(command: Command): Command {
  return command
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
    );
}

/** `haptic run` with its flags: identity overrides first, then each group in turn. */
export function runCommandWithOptions(program: Command): Command {
  const command = addIdentityOptions(program.command('run')).description(
    'the controller: watch Ingresses and the HAProxyTemplateConfig, render, lint and check HAProxy configuration, deliver it to every agent over mTLS (leader only); serve the webhook, health and metrics',
  );
  for (const add of [
    addReleaseOptions,
    addAgentOptions,
    addServingOptions,
    addLoopOptions,
    addModelOptions,
    addStatusOptions,
  ]) {
    add(command);
  }
  return command;
}
