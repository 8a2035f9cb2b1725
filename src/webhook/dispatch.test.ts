import { describe, expect, it } from 'vitest';
import type { ValidationReport } from '../validation/index.ts';
import type { AdmissionRequest } from './admission-review.ts';
import { type ReviewEvent, reviewAdmission } from './dispatch.ts';
import {
  type KindRoutes,
  type ObjectAdmissionValidator,
  firstRoute,
  routeByKind,
} from './object-validators.ts';
import type { ReviewContext } from './review-context.ts';
import { type AdmissionValidator, secretValidator } from './validators.ts';

const secret = (name: string) => ({
  kind: 'Secret',
  metadata: { name, namespace: 'ns' },
  data: {},
});

function admission(
  operation: AdmissionRequest['operation'],
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return {
    uid: 'u-7',
    kind: { group: '', version: 'v1', kind: 'Secret' },
    name: 'mine',
    namespace: 'ns',
    operation,
    username: 'bob',
    object: operation === 'DELETE' ? null : secret('mine'),
    oldObject: operation === 'CREATE' ? null : secret('mine-before'),
    dryRun: false,
    ...extra,
  };
}

const ok: ValidationReport = { allowed: true, findings: [] };
const calls: string[] = [];
const recorder: AdmissionValidator = {
  validateCreate: (next) => (calls.push(`create ${next.name}`), Promise.resolve(ok)),
  validateUpdate: (old, next) => (
    calls.push(`update ${old.name}->${next.name}`),
    Promise.resolve(ok)
  ),
  validateDelete: (old) => (calls.push(`delete ${old.name}`), Promise.resolve(ok)),
};

function options(
  validator: AdmissionValidator,
  events: ReviewEvent[] = [],
  deadlineMs = 1000,
  kinds?: KindRoutes,
) {
  const secrets = routeByKind({
    '/Secret': (_ns, name) => (name === 'mine' ? secretValidator(validator) : undefined),
  });
  return {
    routes: kinds === undefined ? secrets : firstRoute(secrets, kinds),
    deadlineMs,
    onReview: (event: ReviewEvent) => events.push(event),
  };
}

describe('dispatch', () => {
  it('routes each operation, DELETE to the old object', async () => {
    calls.length = 0;
    for (const op of ['CREATE', 'UPDATE', 'DELETE'] as const) {
      expect(await reviewAdmission(admission(op), options(recorder))).toEqual({
        uid: 'u-7',
        allowed: true,
      });
    }
    expect(calls).toEqual(['create mine', 'update mine-before->mine', 'delete mine-before']);
  });

  it('allows Secrets that are not ours, and other kinds, without validating', async () => {
    calls.length = 0;
    await reviewAdmission(admission('CREATE', { name: 'other' }), options(recorder));
    await reviewAdmission(
      admission('CREATE', { kind: { group: '', version: 'v1', kind: 'ConfigMap' } }),
      options(recorder),
    );
    expect(calls).toEqual([]);
  });

  it('denies with every error and keeps warnings short', async () => {
    const report: ValidationReport = {
      allowed: false,
      findings: [
        { code: 'KeyMismatch', severity: 'error', path: 'p', message: 'First.' },
        { code: 'IdentityExpired', severity: 'error', path: 'p', message: 'Second.' },
        {
          code: 'PreviousTrustExpired',
          severity: 'warning',
          path: 'p',
          message: `Long ${'word '.repeat(40)}end.`,
        },
      ],
    };
    const validator = { ...recorder, validateUpdate: () => Promise.resolve(report) };
    const answer = await reviewAdmission(admission('UPDATE'), options(validator));
    expect(answer).toMatchObject({
      uid: 'u-7',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: '- First.\n- Second.' },
    });
    expect(answer.warnings?.[0]?.length).toBeLessThanOrEqual(120);
    expect(answer.warnings?.[0]).toMatch(/…$/);
  });

  it('answers 500 to a validator that throws, and keeps serving', async () => {
    const events: ReviewEvent[] = [];
    const broken = { ...recorder, validateCreate: () => Promise.reject(new Error('boom')) };
    const answer = await reviewAdmission(admission('CREATE'), options(broken, events));
    expect(answer).toEqual({
      uid: 'u-7',
      allowed: false,
      status: { code: 500, message: 'Validation of Secret ns/mine failed: boom' },
    });
    expect(events[0]).toMatchObject({ allowed: false, code: 500, error: 'boom', username: 'bob' });
  });

  it('answers 504 when validation outlives the deadline', async () => {
    const slow = {
      ...recorder,
      validateCreate: () => new Promise<ValidationReport>(() => undefined),
    };
    const answer = await reviewAdmission(admission('CREATE'), options(slow, [], 20));
    expect(answer.status).toEqual({
      code: 504,
      message:
        "Validation of Secret ns/mine did not finish within 20 ms; retry, and check the controller's logs if it persists.",
    });
  });

  it("takes the API server's wait when it is nearer, and tells the validator when the review is over", async () => {
    const seen: ReviewContext[] = [];
    const waiting: ObjectAdmissionValidator = {
      validateCreate: (_next, _namespace, review) => {
        seen.push(review);
        return new Promise<ValidationReport>(() => undefined);
      },
      validateUpdate: () => Promise.resolve(ok),
      validateDelete: () => Promise.resolve(ok),
    };
    const kinds = routeByKind({ 'example.org/Thing': () => waiting });
    const thing = admission('CREATE', {
      kind: { group: 'example.org', version: 'v1', kind: 'Thing' },
    });
    const started = performance.now();
    const answering = reviewAdmission(thing, options(recorder, [], 1000, kinds), {
      signal: new AbortController().signal,
      waitMs: 30,
    });
    // The review's time starts when it arrives: between these two readings of the clock.
    const called = performance.now();
    const answer = await answering;
    expect(answer.status?.message).toMatch(/did not finish within 30 ms/);
    const [review] = seen;
    expect(review?.deadline).toBeGreaterThanOrEqual(started + 30);
    expect(review?.deadline).toBeLessThanOrEqual(called + 30);
    // Answered (504): whatever the validator still runs is told to stop.
    expect(review?.signal.aborted).toBe(true);

    // A caller that leaves ends the review too, before its deadline.
    const gone = new AbortController();
    const pending = reviewAdmission(thing, options(recorder, [], 1000, kinds), {
      signal: gone.signal,
    });
    gone.abort();
    expect(seen[1]?.signal.aborted).toBe(true);
    await pending;
  });

  it('answers 400 when the object is not a Secret', async () => {
    const answer = await reviewAdmission(
      admission('CREATE', { object: { kind: 'ConfigMap' } }),
      options(recorder),
    );
    expect(answer.status).toEqual({
      code: 400,
      message:
        'Cannot validate Secret ns/mine: The new object is invalid: The object is not a Secret.',
    });
  });

  it('routes other kinds to their validators and names the kind in events', async () => {
    const events: ReviewEvent[] = [];
    const denied: ValidationReport = {
      allowed: false,
      findings: [{ code: 'IngressInvalid', severity: 'error', path: 'spec', message: 'No.' }],
    };
    const ingress = {
      validateCreate: () => Promise.resolve(denied),
      validateUpdate: () => Promise.resolve(denied),
      validateDelete: () => Promise.resolve(ok),
    };
    const kinds = (kind: { group: string; kind: string }) =>
      kind.group === 'networking.k8s.io' && kind.kind === 'Ingress' ? ingress : undefined;
    const request = admission('CREATE', {
      kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      object: { kind: 'Ingress' },
    });
    const answer = await reviewAdmission(request, options(recorder, events, 1000, kinds));
    expect(answer).toMatchObject({ allowed: false, status: { code: 403, message: 'No.' } });
    expect(events[0]).toMatchObject({ kind: 'Ingress', allowed: false, code: 403 });
    const other = admission('CREATE', {
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    });
    expect(await reviewAdmission(other, options(recorder, [], 1000, kinds))).toEqual({
      uid: 'u-7',
      allowed: true,
    });
  });

  it('routes other kinds by the name of the object, from the object itself for generateName', async () => {
    const routed: string[] = [];
    const kinds = (_kind: { group: string; kind: string }, namespace: string, name: string) => {
      routed.push(`${namespace}/${name}`);
      return undefined;
    };
    const config = {
      group: 'haproxy-haptic.org',
      version: 'v1alpha1',
      kind: 'HAProxyTemplateConfig',
    };
    await reviewAdmission(
      admission('UPDATE', { kind: config, name: 'haptic' }),
      options(recorder, [], 1000, kinds),
    );
    await reviewAdmission(
      admission('CREATE', {
        kind: config,
        name: '',
        object: { metadata: { name: 'generated-x7k2p', generateName: 'generated-' } },
      }),
      options(recorder, [], 1000, kinds),
    );
    await reviewAdmission(
      admission('DELETE', { kind: config, name: '', oldObject: { metadata: { name: 'gone' } } }),
      options(recorder, [], 1000, kinds),
    );
    expect(routed).toEqual(['ns/haptic', 'ns/generated-x7k2p', 'ns/gone']);
  });
});
