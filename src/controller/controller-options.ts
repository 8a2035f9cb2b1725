/** What `haptic run` starts the controller with: its flags, as the chart passes them. */
import type { KubeConfig } from '@kubernetes/client-node';
import type { IdentityOverrides } from '../webhook/index.ts';
import type { ListenAddress } from '../net/listen-address.ts';
import type { EndpointRanges } from './routing/endpoint-rules.ts';
import type { ModelBudgets } from './routing/model-budgets.ts';
import type { StatusAddressSource } from './status/ingress-status-publisher.ts';

export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly userAgent: string;
  /** Namespace of the release: Lease, HAProxyTemplateConfig, agent Pods. */
  readonly namespace: string;
  readonly release: string;
  readonly ingressClass: string;
  readonly templateConfig: string;
  /** The haptic-haproxy Pods: their label selector and the agents' port. */
  readonly agents: { readonly selector: string; readonly port: number };
  /**
   * Label selector of the release's own Pods in `namespace` (HAProxy and the controller),
   * whose addresses no backend may use (`--own-pod-selector`).
   * @default agents.selector (the HAProxy Pods)
   */
  readonly ownPodSelector?: string;
  /**
   * The ranges endpoints may use (`--pod-cidrs`, `--allowed-endpoint-cidrs`).
   * @default {} (the Nodes' Pod CIDRs only)
   */
  readonly endpointRanges?: EndpointRanges;
  readonly transport:
    | { readonly mode: 'mtls'; readonly tlsDir: string; readonly serverName: string }
    | { readonly mode: 'legacy-basic-auth'; readonly username: string; readonly password: string };
  /** `namespace/name` of the default certificate. */
  readonly defaultCertificate?: string;
  /** What a namespace, and all together, may use (`--server-slots`…). @default defaultModelBudgets */
  readonly budgets?: ModelBudgets;
  readonly leaseName: string;
  readonly identity: string;
  readonly webhook?: {
    readonly certDir: string;
    /** ca.crt of the CAs callers' client certificates must chain to; absent: none asked for. */
    readonly clientCaDir?: string;
    readonly listen: ListenAddress;
    /** Identity Secrets and peer names the chart passes, over the chart defaults. */
    readonly identityOverrides?: IdentityOverrides;
  };
  readonly health: ListenAddress;
  readonly metrics: ListenAddress;
  /** How often every agent's state is compared with the desired configuration. @default 10 s */
  readonly syncIntervalMs?: number;
  readonly leaseDurationMs?: number;
  readonly tlsPollIntervalMs?: number;
  /** Unix socket of the check sandbox (`--check-socket`): every `haproxy -c` runs there. */
  readonly checkSocket: string;
  /**
   * Serve endpoints of FQDN EndpointSlices (`--fqdn-endpoints`); false leaves every one out
   * with an Event.
   * @default true
   */
  readonly fqdnEndpoints?: boolean;
  /**
   * The address served Ingresses carry in their status (`--publish-service`,
   * `--publish-status-address`); none: Ingress status is left alone.
   */
  readonly publishStatus?: StatusAddressSource;
}
