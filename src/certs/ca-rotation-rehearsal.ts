/**
 * The whole remaining rotation, rehearsed on copies of the Secrets before anything is written:
 * each planned write is judged by the same validator the admission webhook runs on Secret
 * writes (`validateSecretWrite`: provider ownership, the identity rules, the trust transitions,
 * the deadline rules), and each wait is assumed to succeed. Refused as a whole when one write
 * would be denied, so a rotation never stops halfway on a write the webhook rejects. The steps
 * are also the plan `--dry-run` prints. Pure.
 */
import type { PeerRole } from './ca-rotation-record.ts';
import { formatRotationRecord, caRotationAnnotation, stageNumber } from './ca-rotation-record.ts';
import {
  type PlanInput,
  type RotationSecret,
  type RotationStep,
  patchedData,
  planRotation,
} from './ca-rotation-plan.ts';
import { secretLabel } from '../validation/secret-data.ts';
import {
  type AgentIdentityConfig,
  validateSecretWrite,
} from '../validation/validate-secret-write.ts';

export interface Rehearsal {
  readonly steps: readonly RotationStep[];
  /** Why the rotation cannot run; empty when it can. */
  readonly problems: readonly string[];
}

const writeRoles = { agent: 'server', controller: 'client' } as const;

function recorded(secret: RotationSecret, value: string): RotationSecret {
  return { ...secret, annotations: { ...secret.annotations, [caRotationAnnotation]: value } };
}

/** Plans every remaining step against copies of the Secrets. */
export function rehearseRotation(input: PlanInput, config: AgentIdentityConfig): Rehearsal {
  const secrets: Record<PeerRole, RotationSecret> = { ...input.secrets };
  const steps: RotationStep[] = [];
  for (;;) {
    const step = planRotation({ ...input, secrets });
    steps.push(step);
    if (step.action === 'refuse') return { steps, problems: [step.message] };
    if (step.action === 'complete') return { steps, problems: [] };
    if (step.action === 'wait') {
      for (const role of step.roles)
        secrets[role] = recorded(secrets[role], formatRotationRecord(step.record));
      continue;
    }
    const problems: string[] = [];
    for (const write of step.writes) {
      const old = secrets[write.role];
      const next = recorded(
        { ...old, data: patchedData(old.data, write.patch) },
        formatRotationRecord(step.record),
      );
      const verdict = validateSecretWrite({
        role: writeRoles[write.role],
        operation: 'UPDATE',
        old,
        next,
        config,
        now: input.now,
      });
      for (const found of verdict.findings)
        if (found.severity === 'error')
          problems.push(
            `Stage ${String(stageNumber(step.stage.name))} (${step.stage.title}) would be denied for Secret ${secretLabel(old)}: ${found.path}: ${found.message}`,
          );
      secrets[write.role] = next;
    }
    if (problems.length > 0) return { steps, problems };
  }
}
