/** The agent's state as `GET /v1/state` and `haptic agent state` report it. */
import { certificateFingerprint } from '../pki/index.ts';
import type { TlsMaterialCounters, TlsMaterialSnapshot } from '../tls/material-watcher.ts';
import { loadedTlsReport } from '../tls/loaded-report.ts';
import { materialStatusAt } from '../tls/tls-material.ts';
import type { AgentStateBody, TlsStateBody } from '../agent-api/api-types.ts';
import { configFileName } from '../agent-api/api-types.ts';
import type { ProcessList } from './process-list.ts';
import type { AppliedState } from './state-file.ts';

export interface StateSources {
  readonly applied: AppliedState;
  /** The master's process list, or why it is unavailable. */
  readonly processes: ProcessList | string;
  readonly tls:
    | { readonly mode: 'legacy-basic-auth' }
    | {
        readonly mode: 'mtls';
        readonly snapshot: TlsMaterialSnapshot;
        readonly clientName: string;
        readonly counters: TlsMaterialCounters;
      };
  readonly now: Date;
}

function tlsState(sources: StateSources): TlsStateBody {
  const { tls } = sources;
  if (tls.mode === 'legacy-basic-auth') return tls;
  const { snapshot } = tls;
  const status = materialStatusAt(snapshot.decoding, sources.now, snapshot.dir);
  const material = snapshot.decoding.ok ? snapshot.decoding.material : undefined;
  const leaf = material?.chain[0];
  const previous = status.ok ? status.trust.previousUntil : undefined;
  const loaded = loadedTlsReport(snapshot, sources.now);
  return {
    mode: 'mtls',
    dir: snapshot.dir,
    revision: snapshot.revision ?? null,
    loadedAt: snapshot.loadedAt.toISOString(),
    ...(status.ok
      ? { valid: true as const }
      : { valid: false as const, reason: status.reason, message: status.message }),
    caFingerprints: (material?.trust ?? []).map(certificateFingerprint),
    previousCaFingerprints:
      previous === undefined
        ? []
        : (material?.previousTrust?.certificates ?? []).map(certificateFingerprint),
    previousCaUntil: material?.previousTrust?.until.toISOString() ?? null,
    identity:
      leaf === undefined
        ? null
        : {
            subject: leaf.subject,
            dnsNames: loaded.leaf?.dnsNames ?? [],
            notAfter: leaf.notAfter.toISOString(),
            fingerprint: certificateFingerprint(leaf),
          },
    clientName: tls.clientName,
    ...tls.counters,
    loaded,
  };
}

export function stateReport(sources: StateSources): AgentStateBody {
  const { applied, processes } = sources;
  const config = applied.files.find((file) => file.path === configFileName);
  return {
    generation: applied.generation,
    configDigest: config?.digest ?? null,
    appliedAt: applied.appliedAt?.toISOString() ?? null,
    files: applied.files,
    haproxy:
      typeof processes === 'string'
        ? { reachable: false, error: processes }
        : { reachable: true, ...processes },
    tls: tlsState(sources),
  };
}
