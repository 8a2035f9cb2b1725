/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 * every `retryPeriod` a replica tries to acquire or renew the Lease with a resourceVersion
 * precondition. A Lease whose record has not changed for `leaseDuration` (measured on the
 * observer's own clock, so clock skew between replicas does not matter) is taken over. A
 * leader that cannot renew within `renewDeadline` steps down before anyone can take over;
 * a leader that stops releases the Lease so another replica takes over at its next retry.
 *
 * Defaults (15 s lease, 10 s renew deadline, 2 s retry) bound a takeover after a crashed
 * leader by 17 s.
 */
import {
  type CoordinationV1Api,
  type V1Lease,
  type V1LeaseSpec,
  V1MicroTime,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describeError } from '../errors.ts';
import { apiStatus as status } from '../kube/api-errors.ts';
import type { KubeClients } from '../kube/kube-clients.ts';

export interface LeaderElectionOptions {
  readonly clients: Pick<KubeClients, 'coordination'>;
  readonly namespace: string;
  readonly leaseName: string;
  /** This replica's identity (POD_NAME). */
  readonly identity: string;
  /** @default 15 s */
  readonly leaseDurationMs?: number;
  /** @default 10 s */
  readonly renewDeadlineMs?: number;
  /** @default 2 s */
  readonly retryPeriodMs?: number;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
  readonly logger: Logger;
}

/** Milliseconds of a MicroTime as the client returns it (a Date, or the wire's string). */
function millis(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string') return undefined;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

export class LeaderElection {
  readonly #options: LeaderElectionOptions;
  readonly #api: CoordinationV1Api;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** The last record seen (holder + renewTime + transitions) and when it was first seen. */
  #observed: { readonly record: string; readonly at: number } | undefined;
  #lastRenew = 0;
  #running: Promise<void> = Promise.resolve();

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#api = options.clients.coordination;
  }

  /**
   * Whether this replica leads now: it won the Lease and renewed it within `renewDeadline`.
   * A replica that was frozen (stopped by the kernel, a long GC pause, a VM migration) wakes
   * up with a stale renewal and does not lead until it renews again, though its retry timer
   * may not have run yet: another replica may hold the Lease by then.
   */
  get leading(): boolean {
    return (
      this.#leading && Date.now() - this.#lastRenew <= (this.#options.renewDeadlineMs ?? 10_000)
    );
  }

  start(): void {
    this.#schedule(0);
  }

  /** Stops trying; a leader releases the Lease. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    // Release whenever the Lease still names us, even if a slow renewal already made us stop
    // leading locally: otherwise the next leader waits out the whole lease duration.
    await this.#release().catch((error: unknown) => {
      this.#options.logger.warn({ err: describeError(error) }, 'could not release the Lease');
    });
    this.#setLeading(false);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tryOnce().finally(() => {
        this.#schedule(this.#options.retryPeriodMs ?? 2_000);
      });
    }, ms);
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#options.logger.info(
      { lease: this.#options.leaseName, identity: this.#options.identity },
      leading ? 'became the leader' : 'stopped leading',
    );
    if (leading) this.#options.onStartedLeading();
    else this.#options.onStoppedLeading();
  }

  async #tryOnce(): Promise<void> {
    const now = Date.now();
    try {
      const acquired = await this.#acquireOrRenew(now);
      if (acquired) this.#lastRenew = now;
      this.#setLeading(acquired);
    } catch (error) {
      this.#options.logger.warn({ err: describeError(error) }, 'leader election request failed');
      if (this.#leading && now - this.#lastRenew > (this.#options.renewDeadlineMs ?? 10_000)) {
        this.#setLeading(false);
      }
    }
  }

  async #acquireOrRenew(now: number): Promise<boolean> {
    const { namespace, leaseName: name, identity } = this.#options;
    const durationMs = this.#options.leaseDurationMs ?? 15_000;
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (status(error) !== 404) throw error;
      await this.#api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: this.#spec(identity, now, 0, now),
        },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''} ${String(millis(spec.renewTime))} ${spec.leaseTransitions ?? 0}`;
    if (this.#observed?.record !== record) this.#observed = { record, at: now };
    const holder = spec.holderIdentity ?? '';
    const expired =
      now - this.#observed.at > (spec.leaseDurationSeconds ?? durationMs / 1000) * 1000;
    if (holder !== identity && holder !== '' && !expired) return false;
    const transitions = (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    const acquired = holder === identity ? (millis(spec.acquireTime) ?? now) : now;
    try {
      const updated = await this.#api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: lease.metadata ?? { name, namespace },
          spec: this.#spec(identity, acquired, transitions, now),
        },
      });
      const next = updated.spec;
      this.#observed = {
        record: `${next?.holderIdentity ?? ''} ${String(millis(next?.renewTime))} ${next?.leaseTransitions ?? 0}`,
        at: now,
      };
      return true;
    } catch (error) {
      if (status(error) === 409) return false;
      throw error;
    }
  }

  #spec(holder: string, acquired: number, transitions: number, renewed: number): V1LeaseSpec {
    return {
      holderIdentity: holder,
      leaseDurationSeconds: Math.ceil((this.#options.leaseDurationMs ?? 15_000) / 1000),
      acquireTime: new V1MicroTime(acquired),
      renewTime: new V1MicroTime(renewed),
      leaseTransitions: transitions,
    };
  }

  async #release(): Promise<void> {
    const { namespace, leaseName: name, identity } = this.#options;
    const lease = await this.#api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    await this.#api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        metadata: lease.metadata ?? { name, namespace },
        spec: {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          renewTime: new V1MicroTime(Date.now()),
          ...(lease.spec.acquireTime === undefined ? {} : { acquireTime: lease.spec.acquireTime }),
          ...(lease.spec.leaseTransitions === undefined
            ? {}
            : { leaseTransitions: lease.spec.leaseTransitions }),
        },
      },
    });
  }
}
