/**
 * Dispatch (the second layer): echo the uid, find the object's validator (routes by kind,
 * namespace and name; see `routeByKind`), call it by operation (DELETE validates the old
 * object), enforce the deadline (the nearer of ours and the API server's), tell the validator
 * when its answer is no longer awaited, and turn an unexpected exception into an errored
 * answer instead of a crash.
 */
import { describeError } from '../errors.ts';
import type { AdmissionRequest, AdmissionResponse } from './admission-review.ts';
import type { ReviewCaller } from './app.ts';
import {
  InvalidObject,
  type KindRoutes,
  type ObjectAdmissionValidator,
} from './object-validators.ts';
import { allowed, errored, fromReport } from './responses.ts';
import type { ReviewContext } from './review-context.ts';
import { isRecord } from '../is-record.ts';

/** What dispatch reports about each review, for logs and metrics. */
export interface ReviewEvent {
  readonly uid: string;
  /** Kind of the object (`Secret`, `Ingress`, `HAProxyTemplateConfig`). */
  readonly kind: string;
  /** `namespace/name` of the object (named `secret` since Secrets came first). */
  readonly secret: string;
  readonly operation: string;
  readonly username: string;
  readonly dryRun: boolean;
  readonly allowed: boolean;
  readonly code: number | undefined;
  readonly ms: number;
  readonly error?: string;
}

export interface DispatchOptions {
  /** The validator of each kind, namespace and name; an object without one is allowed. */
  readonly routes: KindRoutes;
  /** Time a review may take before it is answered with 504 (less when the API server waits less). */
  readonly deadlineMs: number;
  readonly onReview?: (event: ReviewEvent) => void;
}

class DeadlineExceeded extends Error {}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new DeadlineExceeded());
    }, ms);
  });
  return Promise.race([work, deadline]).finally(() => {
    clearTimeout(timer);
  });
}

function validate(
  validator: ObjectAdmissionValidator,
  request: AdmissionRequest,
  review: ReviewContext,
): Promise<AdmissionResponse> | AdmissionResponse {
  const { namespace, uid } = request;
  switch (request.operation) {
    case 'CREATE':
      return validator
        .validateCreate(request.object, namespace, review)
        .then((report) => fromReport(uid, report));
    case 'UPDATE':
      return validator
        .validateUpdate(request.oldObject, request.object, namespace, review)
        .then((report) => fromReport(uid, report));
    case 'DELETE':
      return validator
        .validateDelete(request.oldObject, namespace, review)
        .then((report) => fromReport(uid, report));
    case 'CONNECT':
      return allowed(uid);
  }
}

/**
 * The name of the object under review: request.name, or, when the API server has none yet (a
 * create with generateName), the name in the object itself.
 */
function objectName(request: AdmissionRequest): string {
  if (request.name !== '') return request.name;
  const subject = request.operation === 'DELETE' ? request.oldObject : request.object;
  const metadata = isRecord(subject) ? subject.metadata : undefined;
  return isRecord(metadata) && typeof metadata.name === 'string' ? metadata.name : '';
}

/** Reviews one admission request; never throws. */
export async function reviewAdmission(
  request: AdmissionRequest,
  options: DispatchOptions,
  caller?: ReviewCaller,
): Promise<AdmissionResponse> {
  const started = performance.now();
  const deadlineMs = Math.min(options.deadlineMs, caller?.waitMs ?? Number.POSITIVE_INFINITY);
  // Aborted once answered (or given up): whatever the validator still runs is stopped.
  const answered = new AbortController();
  const review: ReviewContext = {
    deadline: started + deadlineMs,
    signal:
      caller === undefined ? answered.signal : AbortSignal.any([answered.signal, caller.signal]),
  };
  const secret = `${request.namespace}/${request.name}`;
  const validator = options.routes(request.kind, request.namespace, objectName(request));
  const kind = request.kind.kind === '' ? 'object' : request.kind.kind;
  let response: AdmissionResponse;
  let failure: string | undefined;
  if (validator === undefined) {
    response = allowed(request.uid);
  } else {
    try {
      response = await withDeadline(
        Promise.resolve(validate(validator, request, review)),
        deadlineMs,
      );
    } catch (error) {
      failure = describeError(error);
      response =
        error instanceof DeadlineExceeded
          ? errored(
              request.uid,
              504,
              `Validation of ${kind} ${secret} did not finish within ${Math.round(deadlineMs)} ms; retry, and check the controller's logs if it persists.`,
            )
          : error instanceof InvalidObject
            ? errored(request.uid, 400, `Cannot validate ${kind} ${secret}: ${failure}`)
            : errored(request.uid, 500, `Validation of ${kind} ${secret} failed: ${failure}`);
    } finally {
      answered.abort();
    }
  }
  options.onReview?.({
    uid: request.uid,
    kind,
    secret,
    operation: request.operation,
    username: request.username,
    dryRun: request.dryRun,
    allowed: response.allowed,
    code: response.status?.code,
    ms: performance.now() - started,
    ...(failure === undefined ? {} : { error: failure }),
  });
  return response;
}
