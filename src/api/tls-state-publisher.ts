/**
 * Writes Pods' TLS state entries into the HAProxyTemplateConfig status (`status.tls.<pod>`)
 * with JSON merge patches of only those keys, so replicas writing their own entries, the
 * leader writing the agents', and the Ready condition never overwrite each other. Changes are
 * gathered while a write runs; a failed write is retried with the next change or `flush()`.
 */
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { apiStatus, describeApiError } from '../kube/api-errors.ts';
import type { KubeClients } from '../kube/kube-clients.ts';
import { patchTemplateConfigStatus } from './status-patch.ts';
import { type TlsStateEntry, tlsStatusField } from './tls-state-entry.ts';

export interface TlsStatePublisherOptions {
  readonly clients: Pick<KubeClients, 'custom'>;
  readonly namespace: string;
  /** The HAProxyTemplateConfig the release's controllers use. */
  readonly templateConfig: string;
  readonly logger: Logger;
}

export class TlsStatePublisher {
  readonly #options: TlsStatePublisherOptions;
  readonly #custom: CustomObjectsApi;
  /** Pod → entry to write, or null to remove. */
  #pending = new Map<string, TlsStateEntry | null>();
  #writing: Promise<void> | undefined;

  constructor(options: TlsStatePublisherOptions) {
    this.#options = options;
    this.#custom = options.clients.custom;
  }

  /** Queues `entry` for `pod` (null removes it) and writes soon. */
  put(pod: string, entry: TlsStateEntry | null): void {
    this.#pending.set(pod, entry);
    void this.flush();
  }

  /** Writes what is queued; resolves when the queue was written or failed. */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    this.#writing = this.#write(batch).finally(() => {
      this.#writing = undefined;
    });
    await this.#writing;
  }

  async #write(batch: Map<string, TlsStateEntry | null>): Promise<void> {
    const { namespace, templateConfig: name, logger } = this.#options;
    try {
      await patchTemplateConfigStatus(this.#custom, namespace, name, {
        [tlsStatusField]: Object.fromEntries(batch),
      });
    } catch (error) {
      // Newer changes queued meanwhile win; the rest is retried with the next write.
      for (const [pod, entry] of batch) if (!this.#pending.has(pod)) this.#pending.set(pod, entry);
      if (apiStatus(error) === 404) return;
      logger.warn(
        { templateConfig: `${namespace}/${name}`, err: describeApiError(error) },
        'could not record the TLS state in the HAProxyTemplateConfig status',
      );
    }
  }
}
