/**
 * What every Pod of the release has loaded for the mTLS link, as this controller replica
 * knows it: its own material (every replica) and, while it leads, every agent's report. Keeps
 * the metrics (`TlsSeries`) and the HAProxyTemplateConfig status entries in step, writing an
 * entry only when it changed, or when its last exchange is more than a minute newer than the
 * one written.
 */
import { type TlsReport, parseTlsReport } from '../../agent-api/tls-report.ts';
import type { TlsSeries } from './tls-series.ts';
import type { TlsPeerRole, TlsStateEntry } from '../../api/tls-state-entry.ts';

/** Where entries go: the status publisher. */
export interface TlsStateSink {
  put(pod: string, entry: TlsStateEntry | null): void;
}

export interface TlsStateBookOptions {
  /** This replica's Pod name. */
  readonly pod: string;
  readonly series: TlsSeries;
  readonly sink: TlsStateSink;
  /** @default the system clock */
  readonly now?: () => Date;
}

/** How much newer a last exchange must be before it alone is written again. */
const exchangeRefreshMs = 60_000;

interface Known {
  readonly role: TlsPeerRole;
  readonly loaded: TlsReport | null;
  readonly error: string | null;
  readonly lastExchange: Date | undefined;
  /** What was last handed to the sink, to write only changes. */
  readonly written: { readonly body: string; readonly lastExchange: number } | undefined;
}

/** The content of an entry apart from its timestamps. */
function bodyOf(known: Known): string {
  return JSON.stringify([known.role, known.loaded, known.error]);
}

export class TlsStateBook {
  readonly #options: TlsStateBookOptions;
  readonly #pods = new Map<string, Known>();

  constructor(options: TlsStateBookOptions) {
    this.#options = options;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  /** This replica's own material, as it has it loaded now. */
  own(report: TlsReport): void {
    this.#update(this.#options.pod, 'controller', { loaded: report, error: null });
  }

  /**
   * An agent's answer to `GET /v1/state`: its `tls` member as received. A malformed report is
   * recorded as an error naming the field; a legacy (Basic authentication) agent has none.
   */
  agentState(pod: string, tls: unknown): void {
    const mode = typeof tls === 'object' && tls !== null && 'mode' in tls ? tls.mode : undefined;
    if (mode === 'legacy-basic-auth') return;
    const loaded =
      typeof tls === 'object' && tls !== null && 'loaded' in tls ? tls.loaded : undefined;
    const parsed = parseTlsReport(loaded, 'tls.loaded');
    if (parsed.ok) {
      this.#update(pod, 'agent', { loaded: parsed.report, error: null });
    } else {
      this.#update(pod, 'agent', {
        loaded: null,
        error: `The agent's state answer is malformed: ${parsed.message}; run the same haptic version in the controller and the agents.`,
      });
    }
    this.exchanged(pod);
  }

  /** A state request to agent `pod` failed: its last report stays, marked with why. */
  agentFailed(pod: string, message: string): void {
    const loaded = this.#pods.get(pod)?.loaded ?? null;
    this.#update(pod, 'agent', { loaded, error: `The last state request failed: ${message}` });
  }

  /** A successful mTLS exchange with agent `pod` (state or apply answered). */
  exchanged(pod: string): void {
    const at = this.#now();
    for (const name of [pod, this.#options.pod]) {
      const known = this.#pods.get(name);
      if (known !== undefined) this.#write(name, { ...known, lastExchange: at });
    }
  }

  /** Keeps the agents of `pods` and removes every other agent's entry and series. */
  retainAgents(pods: ReadonlySet<string>): void {
    for (const [name, known] of this.#pods) {
      if (known.role !== 'agent' || pods.has(name)) continue;
      this.#pods.delete(name);
      this.#options.series.remove(name);
      this.#options.sink.put(name, null);
    }
  }

  /** Drops the agents (leadership lost): their series go; the new leader writes their entries. */
  forgetAgents(): void {
    for (const [name, known] of this.#pods) {
      if (known.role !== 'agent') continue;
      this.#pods.delete(name);
      this.#options.series.remove(name);
    }
  }

  /** Removes this replica's own entry (shutting down). */
  removeOwn(): void {
    this.#pods.delete(this.#options.pod);
    this.#options.series.remove(this.#options.pod);
    this.#options.sink.put(this.#options.pod, null);
  }

  #update(
    pod: string,
    role: TlsPeerRole,
    state: { readonly loaded: TlsReport | null; readonly error: string | null },
  ): void {
    const known = this.#pods.get(pod);
    const next: Known = {
      role,
      ...state,
      lastExchange: known?.lastExchange,
      written: known?.written,
    };
    if (known === undefined || bodyOf(known) !== bodyOf(next))
      this.#options.series.set(role, pod, state.loaded);
    this.#write(pod, next);
  }

  #write(pod: string, known: Known): void {
    const body = bodyOf(known);
    const lastExchange = known.lastExchange?.getTime() ?? 0;
    const written = known.written;
    const due =
      written === undefined ||
      written.body !== body ||
      lastExchange - written.lastExchange >= exchangeRefreshMs ||
      (written.lastExchange === 0 && lastExchange > 0);
    if (!due) {
      this.#pods.set(pod, known);
      return;
    }
    this.#pods.set(pod, { ...known, written: { body, lastExchange } });
    this.#options.sink.put(pod, {
      role: known.role,
      loaded: known.loaded,
      error: known.error,
      lastExchange: known.lastExchange?.toISOString() ?? null,
      reportedBy: this.#options.pod,
      reportedAt: this.#now().toISOString(),
    });
  }
}
