/**
 * The ValidatingWebhookConfiguration the chart registered for a release's namespace: where its
 * webhook is reached (a controller Pod's :9443, verified with the registration's CA bundle as
 * the Service's name, as the API server verifies it), and the means to take some of its
 * webhooks out of the registration for a while: what a write meets when the webhook is not
 * asked (the chart installed without it, or the controller down under failurePolicy Ignore).
 */
import type { SitePod } from '../controller/local-site.ts';
import { eventually } from '../../support/eventually.ts';
import { kubectl } from '../../support/cluster.ts';
import type { ReviewTarget } from '../../support/unauthenticated-review.ts';

interface Webhook {
  readonly name: string;
  readonly clientConfig: {
    readonly caBundle?: string;
    readonly service?: { readonly name: string; readonly namespace: string };
  };
}

interface Registration {
  readonly metadata: { readonly name: string };
  readonly webhooks?: readonly Webhook[];
}

export class ChartWebhook {
  /** Name of the ValidatingWebhookConfiguration. */
  readonly name: string;
  /** Its webhooks as the chart registered them. */
  private readonly webhooks: readonly Webhook[];
  private readonly service: { readonly name: string; readonly namespace: string };
  private readonly caPem: string;

  private constructor(registration: Registration, webhook: Required<Webhook['clientConfig']>) {
    this.name = registration.metadata.name;
    this.webhooks = registration.webhooks ?? [];
    this.service = webhook.service;
    this.caPem = Buffer.from(webhook.caBundle, 'base64').toString();
  }

  /** The registration whose webhooks call a Service in `namespace`. */
  static async of(namespace: string): Promise<ChartWebhook> {
    const result = await kubectl(['get', 'validatingwebhookconfigurations', '-o', 'json']);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    const { items } = JSON.parse(result.stdout) as { items: readonly Registration[] };
    for (const item of items) {
      const ours = item.webhooks?.find((h) => h.clientConfig.service?.namespace === namespace);
      const { caBundle, service } = ours?.clientConfig ?? {};
      if (caBundle !== undefined && service !== undefined) {
        return new ChartWebhook(item, { caBundle, service });
      }
    }
    throw new Error(`no webhook registered for a Service in namespace ${namespace}`);
  }

  /** The webhook at `controller`'s Pod IP, verified as `<service>.<namespace>.svc`. */
  target(controller: SitePod): ReviewTarget {
    return {
      host: controller.address,
      port: 9443,
      caPem: this.caPem,
      servername: `${this.service.name}.${this.service.namespace}.svc`,
    };
  }

  /**
   * Takes the webhooks named `names` out of the registration until the returned function puts
   * them back. `admitted` writes (dry-run) what those webhooks deny: both wait until the API
   * server answers accordingly, so no write races the change.
   */
  async without(
    names: readonly string[],
    admitted: () => Promise<boolean>,
  ): Promise<() => Promise<void>> {
    const missing = names.filter((name) => !this.webhooks.some((h) => h.name === name));
    if (missing.length > 0) throw new Error(`${this.name} has no webhook ${missing.join(', ')}`);
    await this.register(this.webhooks.filter((h) => !names.includes(h.name)));
    await eventually(`writes admitted without ${names.join(', ')}`, admitted, (yes) => yes);
    return async () => {
      await this.register(this.webhooks);
      await eventually(`writes denied by ${names.join(', ')} again`, admitted, (yes) => !yes);
    };
  }

  private async register(webhooks: readonly Webhook[]): Promise<void> {
    const patch = [{ op: 'replace', path: '/webhooks', value: webhooks }];
    const result = await kubectl([
      ...['patch', 'validatingwebhookconfiguration', this.name],
      ...['--type=json', '-p', JSON.stringify(patch)],
    ]);
    if (result.exitCode !== 0) throw new Error(result.stderr);
  }
}
