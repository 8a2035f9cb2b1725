import { describe, expect, it } from 'vitest';
import {
  type PlanInput,
  type RotationSecret,
  type RotationStep,
  patchedData,
  planRotation,
} from '../../../src/certs/ca-rotation-plan.ts';
import {
  type RotationStageName,
  caRotationAnnotation,
  formatRotationRecord,
} from '../../../src/certs/ca-rotation-record.ts';
import { rehearseRotation } from '../../../src/certs/ca-rotation-rehearsal.ts';
import { hourMs, now } from '../validation/material.ts';
import { agentName, controllerName, rotationFixture } from './ca-rotation-fixture.ts';

const fixture = await rotationFixture();
const config = {
  namespace: 'haptic',
  provider: 'external' as const,
  serverSecret: 'haptic-agent-identity',
  clientSecret: 'haptic-controller-identity',
  serverName: agentName,
  clientName: controllerName,
};

function input(secrets = fixture.secrets, at = now): PlanInput {
  return { target: fixture.target, secrets, overlapMs: hourMs, now: at };
}

/** The Secrets after carrying out `step` (what the run does, without the Pods). */
function after(secrets: PlanInput['secrets'], step: RotationStep): PlanInput['secrets'] {
  const next = { ...secrets };
  const mark = (secret: RotationSecret, value: string): RotationSecret => ({
    ...secret,
    annotations: { ...secret.annotations, [caRotationAnnotation]: value },
  });
  if (step.action === 'write')
    for (const write of step.writes)
      next[write.role] = mark(
        { ...next[write.role], data: patchedData(next[write.role].data, write.patch) },
        formatRotationRecord(step.record),
      );
  if (step.action === 'wait')
    for (const role of step.roles) next[role] = mark(next[role], formatRotationRecord(step.record));
  return next;
}

/** The Secrets once the rotation has completed `stage` on both. */
function completedThrough(stage: RotationStageName, at = now): PlanInput['secrets'] {
  let secrets = fixture.secrets;
  for (;;) {
    const step = planRotation(input(secrets, at));
    if (step.action !== 'write' && step.action !== 'wait') throw new Error(JSON.stringify(step));
    secrets = after(secrets, step);
    if (step.stage.name === stage) return secrets;
  }
}

const stageOf = (step: RotationStep) =>
  step.action === 'write' || step.action === 'wait'
    ? `${step.action} ${step.stage.name}`
    : step.action;

describe('the rotate-ca stage planner', () => {
  it("walks the guide's stages in order, every write admitted by the Secret validator", () => {
    const rehearsal = rehearseRotation(input(), config);
    expect(rehearsal.problems).toEqual([]);
    expect(rehearsal.steps.map(stageOf)).toEqual([
      'write trust-distributed',
      'wait trust-loaded',
      'write identities-replaced',
      'wait identities-loaded',
      'wait exchange-verified',
      'write previous-ca-revoked',
      'wait complete',
      'complete',
    ]);
  });

  it('distributes the new CA with the old one as previous-ca.crt until now + overlap, on both Secrets', () => {
    const step = planRotation(input());
    if (step.action !== 'write') throw new Error(step.action);
    expect(step.writes.map((w) => w.role)).toEqual(['controller', 'agent']);
    expect(step.writes[0]?.patch).toEqual({
      'ca.crt': fixture.target.ca,
      'previous-ca.crt': fixture.secrets.controller.data['ca.crt'],
      'previous-ca-until': Buffer.from('2030-03-01T13:00:00Z').toString('base64'),
    });
    expect(step.record.until).toEqual(new Date(now.getTime() + hourMs));
  });

  it('resumes at the first incomplete stage, with the recorded deadline', () => {
    const later = new Date(now.getTime() + 10 * 60_000);
    const step = planRotation(input(completedThrough('trust-distributed'), later));
    expect(stageOf(step)).toBe('wait trust-loaded');
    if (step.action === 'wait') expect(step.record.until).toEqual(new Date(now.getTime() + hourMs));
    expect(stageOf(planRotation(input(completedThrough('identities-replaced'), later)))).toBe(
      'wait identities-loaded',
    );
  });

  it('writes only the Secret a killed run did not reach', () => {
    const first = planRotation(input());
    if (first.action !== 'write') throw new Error(first.action);
    const half = after(fixture.secrets, { ...first, writes: first.writes.slice(0, 1) });
    const step = planRotation(input(half, new Date(now.getTime() + 60_000)));
    if (step.action !== 'write') throw new Error(step.action);
    expect(step.writes.map((w) => w.role)).toEqual(['agent']);
    expect(step.record.until).toEqual(first.record.until);
  });

  it('refuses with the recovery advice once the overlap passed before the identities were replaced', () => {
    const late = new Date(now.getTime() + hourMs);
    const step = planRotation(input(completedThrough('trust-loaded'), late));
    expect(step).toMatchObject({ action: 'refuse' });
    if (step.action === 'refuse') {
      expect(step.message).toContain('before the identities were replaced');
      expect(step.message).toContain('only before the overlap expires');
    }
  });

  it('goes on after the deadline once the identities were replaced', () => {
    const late = new Date(now.getTime() + 2 * hourMs);
    expect(stageOf(planRotation(input(completedThrough('identities-loaded'), late)))).toBe(
      'wait exchange-verified',
    );
  });

  it('refuses other files while a rotation is in progress', async () => {
    const other = await rotationFixture();
    const step = planRotation({
      ...input(completedThrough('trust-distributed')),
      target: other.target,
    });
    expect(step).toMatchObject({ action: 'refuse' });
    if (step.action === 'refuse')
      expect(step.message).toContain('records a rotation to another CA');
  });

  it('refuses to start while previous-ca.crt is present (a rotation by other means)', () => {
    const second = completedThrough('trust-distributed');
    const unrecorded = {
      ...second,
      agent: { ...second.agent, annotations: {} },
      controller: { ...second.controller, annotations: {} },
    };
    const step = planRotation(input(unrecorded));
    expect(step).toMatchObject({ action: 'refuse' });
    if (step.action === 'refuse')
      expect(step.message).toContain('Complete any existing rotation before starting another one');
  });

  it('refuses a Secret changed after its recorded stage', () => {
    const secrets = completedThrough('identities-replaced');
    const reverted = {
      ...secrets,
      agent: {
        ...secrets.agent,
        data: { ...secrets.agent.data, 'tls.crt': fixture.secrets.agent.data['tls.crt'] ?? '' },
      },
    };
    const step = planRotation(input(reverted));
    expect(step).toMatchObject({ action: 'refuse' });
    if (step.action === 'refuse')
      expect(step.message).toContain('tls.crt is not the new agent certificate');
  });

  it('is complete, and stays so, once both Secrets record the last stage', () => {
    const secrets = completedThrough('complete');
    expect(planRotation(input(secrets)).action).toBe('complete');
    expect(Object.keys(secrets.agent.data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
  });
});
