/**
 * The configuration after a change of EndpointSlices alone, without rendering: the backends of
 * the last rendered model rebuilt from the snapshot, and, when only their server slots differ
 * (same slot counts, no endpoint refused or unresolved before or now), the last files with
 * those slot lines rewritten (runtime-changes.ts). The result is the files a full render
 * gives for a template that writes each slot as one `server` line, which the default
 * template does; the reconciler renders in full soon after to confirm, and delivers that
 * render when it differs (a template writing endpoints elsewhere too). Pure.
 */
import { configFileName } from '../../agent-api/api-types.ts';
import type { FileDigest } from '../../agent-api/file-set-digest.ts';
import {
  type ServerChange,
  rewrittenPlan,
  slotLineFindings,
} from '../../haproxy/runtime-changes.ts';
import { parseServerAddress } from '../../haproxy/server-lines.ts';
import { rewriteServerSlots } from '../../haproxy/slot-rewrite.ts';
import type { Problem } from '../../problem.ts';
import { contentDigest } from '../../sandbox/content-digest.ts';
import type { ApplyFile } from '../../agent-api/apply-encoding.ts';
import type { ClusterSnapshot } from '../routing/cluster-snapshot.ts';
import { ingressEventReasons } from '../routing/ingress-event-reasons.ts';
import { type BackendResult, backendVariant } from '../routing/model-backends.ts';
import type { ModelBackend, ModelResult } from '../routing/model-types.ts';
import type { ServiceRef } from '../../validation/validate-ingress.ts';

export interface RenderedConfig {
  readonly files: readonly ApplyFile[];
  readonly model: ModelResult;
  /** Each file's `sha256:` digest, when known (a slot update's): not hashed again. */
  readonly fileDigests?: readonly FileDigest[];
  /** haproxy.cfg's text, when known (a slot update's): not decoded again. */
  readonly configText?: string;
}

export type EndpointUpdate =
  | { readonly kind: 'unchanged' }
  | {
      readonly kind: 'slots';
      readonly files: readonly ApplyFile[];
      readonly model: ModelResult;
      /** The slot changes, in line order: `runtimePlan` from the previous files to `files`. */
      readonly changes: readonly ServerChange[];
      /** Each file's `sha256:` digest. */
      readonly fileDigests: readonly FileDigest[];
      /** haproxy.cfg's new text. */
      readonly configText: string;
    }
  /** Something beyond server slots changed: render in full. */
  | FullRender;

/** Why a change of EndpointSlices needs a full render; the messages go to the debug log. */
export const fullRenderReasons = {
  /** The last render left endpoints out (refused, unresolved, over a budget). */
  EndpointsLeftOut: 'EndpointsLeftOut',
  /** A backend built from the snapshot leaves endpoints out. */
  BackendLeavesEndpointsOut: 'BackendLeavesEndpointsOut',
  /** A backend needs another number of server slots. */
  SlotCountChanged: 'SlotCountChanged',
  /** A slot holds something other than an address and port. */
  SlotNotAddress: 'SlotNotAddress',
  /** The last render has no haproxy.cfg. */
  ConfigMissing: 'ConfigMissing',
  /** The template does not write each slot as one `server` line. */
  SlotsNotServerLines: 'SlotsNotServerLines',
  /** The rewritten slots are not what the agents apply at runtime. */
  NotRuntimeChanges: 'NotRuntimeChanges',
  /** The lint refuses a rewritten slot line. */
  SlotLineRefused: 'SlotLineRefused',
} as const;

export type FullRenderReason = (typeof fullRenderReasons)[keyof typeof fullRenderReasons];

export type FullRender = { readonly kind: 'render' } & Problem<FullRenderReason>;

export type BuildBackend = (
  snapshot: ClusterSnapshot,
  namespace: string,
  ref: ServiceRef,
) => BackendResult;

const endpointReasons: ReadonlySet<string> = new Set([
  ingressEventReasons.EndpointRefused,
  ingressEventReasons.EndpointUnresolved,
  // A backend left out for a budget has no endpoints in the last render; only a render
  // decides whether it fits now.
  ingressEventReasons.BudgetExceeded,
]);

function serviceRef(backend: ModelBackend): ServiceRef {
  return {
    name: backend.service,
    port: /^[0-9]+$/.test(backend.servicePort)
      ? { number: Number(backend.servicePort) }
      : { name: backend.servicePort },
  };
}

function render(reason: FullRenderReason, message: string): FullRender {
  return { kind: 'render', reason, message };
}

/** The slot changes of one backend, or why they are more than slot changes. */
function slotChanges(before: ModelBackend, after: ModelBackend): ServerChange[] | FullRender {
  if (before.slots.length !== after.slots.length) {
    return render(
      fullRenderReasons.SlotCountChanged,
      `backend ${before.name} needs ${after.slots.length} server slots`,
    );
  }
  const changes: ServerChange[] = [];
  for (const [i, slot] of after.slots.entries()) {
    const was = before.slots[i];
    if (was?.endpoint === slot.endpoint && was.spare === slot.spare) continue;
    const parsed = parseServerAddress(slot.endpoint);
    if (parsed === undefined) {
      return render(
        fullRenderReasons.SlotNotAddress,
        `backend ${after.name} slot ${slot.name} holds ${slot.endpoint}, not an address and port`,
      );
    }
    changes.push({
      backend: after.name,
      server: slot.name,
      ...parsed,
      state: slot.spare ? 'maint' : 'ready',
    });
  }
  return changes;
}

/** The slot update `snapshot` makes of `previous`, or why it needs a full render. */
export function endpointUpdate(
  previous: RenderedConfig,
  snapshot: ClusterSnapshot,
  build: BuildBackend,
): EndpointUpdate {
  if (previous.model.warnings.some((warning) => endpointReasons.has(warning.reason))) {
    return render(fullRenderReasons.EndpointsLeftOut, 'the last render left endpoints out');
  }
  const backends: ModelBackend[] = [];
  const changes: ServerChange[] = [];
  for (const backend of previous.model.model.backends) {
    // The same Service port under the backend's own options (and so its name).
    const result = backendVariant(
      build(snapshot, backend.namespace, serviceRef(backend)),
      backend.options,
    );
    if (result.problems.length > 0) {
      return render(
        fullRenderReasons.BackendLeavesEndpointsOut,
        `backend ${backend.name} leaves endpoints out`,
      );
    }
    const found = slotChanges(backend, result.backend);
    if (!Array.isArray(found)) return found;
    changes.push(...found);
    backends.push(result.backend);
  }
  if (changes.length === 0) return { kind: 'unchanged' };
  const config = previous.files.find((file) => file.path === configFileName);
  if (config === undefined) {
    return render(fullRenderReasons.ConfigMissing, `the last render has no ${configFileName}`);
  }
  const text = previous.configText ?? Buffer.from(config.content).toString('utf8');
  const rewritten = rewriteServerSlots(text, changes);
  if (rewritten === undefined)
    return render(
      fullRenderReasons.SlotsNotServerLines,
      'the template does not write each slot as one server line',
    );
  const digests =
    previous.fileDigests ??
    previous.files.map((file) => ({ path: file.path, digest: contentDigest(file.content) }));
  const content = Buffer.from(rewritten.config);
  // Kept by content, so the set's digest (bundleDigest) does not hash the new file again.
  const digest = contentDigest(content);
  const files = previous.files.map((file) =>
    file.path === configFileName ? { path: file.path, content } : file,
  );
  const fileDigests = digests.map((file) =>
    file.path === configFileName ? { path: file.path, digest } : file,
  );
  const plan = rewrittenPlan(digests, fileDigests, rewritten);
  if (!plan.runtime || plan.changes.length !== changes.length) {
    return render(
      fullRenderReasons.NotRuntimeChanges,
      'the rewritten slots are not runtime changes',
    );
  }
  if (slotLineFindings(plan.lines).length > 0) {
    return render(fullRenderReasons.SlotLineRefused, 'the lint refuses a slot line');
  }
  return {
    kind: 'slots',
    files,
    changes: plan.changes,
    fileDigests,
    configText: rewritten.config,
    model: { ...previous.model, model: { ...previous.model.model, backends } },
  };
}
