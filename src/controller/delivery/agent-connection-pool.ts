/**
 * The controller's HTTPS connections to agents, built from its mounted identity and trust.
 * The pool is rebuilt when the material changes, when a previous-CA deadline passes, when
 * the own certificate expires, and at least every 30 seconds; requests under way finish on
 * the pool they started on, which is then closed. Every new connection verifies the agent's
 * certificate twice: OpenSSL against the anchors (serverAuth purpose), then the product's
 * chain check against the trust in force at that moment, with the DNS SAN
 * `AGENT_TLS_SERVER_NAME`. TLS session resumption is off, so no connection skips that check.
 */
import { Agent } from 'node:https';
import type { PeerCertificate } from 'node:tls';
import type { TlsMaterialSource } from '../../tls/material-watcher.ts';
import { decodePeerChain } from '../../tls/peer-chain.ts';
import { verifyPeer } from '../../tls/peer-verification.ts';
import type { PeerReason } from '../../tls/reasons.ts';
import type { Problem } from '../../problem.ts';
import { secureContextOptions } from '../../tls/secure-context.ts';
import {
  type MaterialProblem,
  type TlsMaterial,
  materialStatusAt,
  trustAt,
} from '../../tls/tls-material.ts';

/** The agent's certificate failed the product's own check (in `checkServerIdentity`). */
export class AgentCertificateRejected extends Error implements Problem<PeerReason> {
  readonly reason: PeerReason;
  constructor(reason: PeerReason, message: string) {
    super(message);
    this.name = 'AgentCertificateRejected';
    this.reason = reason;
  }
}

export interface ConnectionPoolOptions {
  readonly material: TlsMaterialSource;
  /** DNS SAN agents' certificates must carry (`AGENT_TLS_SERVER_NAME`). */
  readonly serverName: string;
  /** Longest life of one pool. @default 30 seconds */
  readonly maxAgeMs?: number;
  /** Connections kept per agent. @default 4 */
  readonly maxSocketsPerAgent?: number;
  readonly now?: () => Date;
}

interface Generation {
  readonly agent: Agent;
  readonly digest: string;
  readonly expiresAt: number;
  inFlight: number;
  retired: boolean;
}

export type PoolLease =
  | { readonly ok: true; readonly agent: Agent; readonly release: () => void }
  /** The own identity or trust is invalid: nothing is sent. */
  | ({ readonly ok: false } & MaterialProblem);

export class AgentConnectionPool {
  readonly #options: ConnectionPoolOptions;
  readonly #now: () => Date;
  #current: Generation | undefined;
  #rebuilds = 0;

  constructor(options: ConnectionPoolOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** How many times the pool was (re)built. */
  get rebuilds(): number {
    return this.#rebuilds;
  }

  /**
   * The connections to use for one request, or why there are none: the own identity or trust
   * is invalid now, in which case nothing is sent at all.
   */
  acquire(): PoolLease {
    const now = this.#now();
    const snapshot = this.#options.material.current();
    const status = materialStatusAt(snapshot.decoding, now, snapshot.dir);
    if (!status.ok) {
      this.#retire();
      return {
        ok: false,
        reason: status.reason,
        message: `The controller sends nothing to agents while its TLS material is invalid: ${status.message}`,
      };
    }
    let generation = this.#current;
    if (
      generation === undefined ||
      generation.digest !== status.material.digest ||
      now.getTime() >= generation.expiresAt
    ) {
      this.#retire();
      generation = this.#build(status.material, now);
      this.#current = generation;
    }
    const leased = generation;
    leased.inFlight += 1;
    let released = false;
    return {
      ok: true,
      agent: leased.agent,
      release: () => {
        if (released) return;
        released = true;
        leased.inFlight -= 1;
        if (leased.retired && leased.inFlight === 0) leased.agent.destroy();
      },
    };
  }

  /** Closes every connection (requests under way fail). */
  close(): void {
    this.#current?.agent.destroy();
    this.#current = undefined;
  }

  #retire(): void {
    const generation = this.#current;
    if (generation === undefined) return;
    this.#current = undefined;
    generation.retired = true;
    if (generation.inFlight === 0) generation.agent.destroy();
  }

  #build(material: TlsMaterial, now: Date): Generation {
    this.#rebuilds += 1;
    const { serverName } = this.#options;
    const trust = trustAt(material, now);
    const expiresAt = Math.min(
      now.getTime() + (this.#options.maxAgeMs ?? 30_000),
      trust.previousUntil?.getTime() ?? Infinity,
      material.chain[0].notAfter.getTime(),
    );
    const agent = new Agent({
      ...secureContextOptions(material, trust),
      keepAlive: true,
      maxSockets: this.#options.maxSocketsPerAgent ?? 4,
      maxCachedSessions: 0,
      rejectUnauthorized: true,
      servername: serverName,
      checkServerIdentity: (_host: string, certificate: PeerCertificate) => {
        const at = this.#now();
        const verification = verifyPeer(
          decodePeerChain(certificate),
          trustAt(material, at),
          { purpose: 'serverAuth', dnsName: serverName, role: 'the agent' },
          at,
        );
        return verification.ok
          ? undefined
          : new AgentCertificateRejected(verification.reason, verification.message);
      },
    });
    return { agent, digest: material.digest, expiresAt, inFlight: 0, retired: false };
  }
}
