/**
 * The Ready condition of a HAProxyTemplateConfig as the API shows it, following the
 * Kubernetes condition conventions: `lastTransitionTime` moves only when the status flips
 * (a new reason or message keeps it), and `observedGeneration` names the spec it judged.
 * Pure: the clock and the previous condition are passed in.
 */
import { isRecord } from '../is-record.ts';
import type { Problem } from '../problem.ts';

/** Reasons of a HAProxyTemplateConfig's Ready condition (and of the Warning Events beside it). */
export const readyReasons = {
  /** The configuration passed haproxy -c and runs on every agent. */
  Delivered: 'Delivered',
  /** The HAProxyTemplateConfig cannot be read, or a template does not parse. */
  TemplateConfigInvalid: 'TemplateConfigInvalid',
  /** Rendering a template failed or was stopped at a limit. */
  RenderFailed: 'RenderFailed',
  /** The allow-list lint refuses the rendered configuration. */
  LintFailed: 'LintFailed',
  /** haproxy -c rejects the rendered configuration, or could not check it. */
  CheckFailed: 'CheckFailed',
  /** Some agents did not take the configuration. */
  DeliveryFailed: 'DeliveryFailed',
} as const;

export type ReadyReason = (typeof readyReasons)[keyof typeof readyReasons];

export interface ReadyCondition extends Problem<ReadyReason> {
  readonly ready: boolean;
  readonly observedGeneration: number;
  /** Set when every agent runs this configuration: recorded as the status' lastDelivery. */
  readonly delivered?: { readonly digest: string };
}

/** What a later condition needs of the one before it. */
export interface ConditionStamp {
  readonly status: 'True' | 'False';
  readonly lastTransitionTime: string;
}

/** The Ready condition exactly as written to the status subresource. */
export interface ReadyConditionBody extends ConditionStamp {
  readonly type: 'Ready';
  readonly reason: ReadyReason;
  readonly message: string;
  readonly observedGeneration: number;
}

/** Conditions and Events carry at most this much of a message. */
export const maxConditionMessage = 1000;

/** `message` cut to `maxConditionMessage` characters, an ellipsis marking the cut. */
export function clipMessage(message: string): string {
  return message.length > maxConditionMessage
    ? `${message.slice(0, maxConditionMessage - 1)}…`
    : message;
}

/** A Kubernetes timestamp: RFC 3339 in UTC, whole seconds. */
export function kubeTime(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The Ready condition to write: its lastTransitionTime is the previous one's while the status
 * stays the same, `now` when it flips or there was none.
 */
export function readyConditionBody(
  condition: ReadyCondition,
  previous: ConditionStamp | undefined,
  now: Date,
): ReadyConditionBody {
  const status = condition.ready ? 'True' : 'False';
  return {
    type: 'Ready',
    status,
    reason: condition.reason,
    message: clipMessage(condition.message),
    lastTransitionTime: previous?.status === status ? previous.lastTransitionTime : kubeTime(now),
    observedGeneration: condition.observedGeneration,
  };
}

/**
 * The Ready condition's status and lastTransitionTime in a HAProxyTemplateConfig's status as
 * read from the API (hostile: anything not shaped like a condition is no previous condition).
 */
export function readyStampOf(status: unknown): ConditionStamp | undefined {
  if (!isRecord(status) || !Array.isArray(status.conditions)) return undefined;
  const ready: unknown = status.conditions.find(
    (condition: unknown) => isRecord(condition) && condition.type === 'Ready',
  );
  if (!isRecord(ready)) return undefined;
  const { status: value, lastTransitionTime } = ready;
  if ((value !== 'True' && value !== 'False') || typeof lastTransitionTime !== 'string') {
    return undefined;
  }
  return { status: value, lastTransitionTime };
}
