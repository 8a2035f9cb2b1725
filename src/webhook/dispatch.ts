/**
 * Dispatch (the second layer): echo the uid, route by kind, name and operation (DELETE
 * validates the old object), enforce the deadline, and turn an unexpected exception into an
 * errored answer instead of a crash.
 */
import { describeError } from '../errors.ts';
import { type SecretObject, readSecretObject } from '../validation/index.ts';
import type { AdmissionRequest, AdmissionResponse } from './admission-review.ts';
import { allowed, errored, fromReport } from './responses.ts';
import type { AdmissionValidator } from './validators.ts';

/** The validator responsible for a Secret, or undefined when the Secret is not ours. */
export type SecretRoutes = (namespace: string, name: string) => AdmissionValidator | undefined;

/** What dispatch reports about each review, for logs and metrics. */
export interface ReviewEvent {
  readonly uid: string;
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
  readonly routes: SecretRoutes;
  /** Time a review may take before it is answered with 504. */
  readonly deadlineMs: number;
  readonly onReview?: (event: ReviewEvent) => void;
}

class DeadlineExceeded extends Error {}

/** The review carries no object that can be read as a Secret. */
class InvalidObject extends Error {}

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

function secretOf(value: unknown, namespace: string, role: string): SecretObject {
  const secret = readSecretObject(value, namespace);
  if (typeof secret === 'string')
    throw new InvalidObject(`The ${role} object is invalid: ${secret}`);
  return secret;
}

function validate(
  validator: AdmissionValidator,
  request: AdmissionRequest,
): Promise<AdmissionResponse> | AdmissionResponse {
  const { namespace, operation, uid } = request;
  switch (operation) {
    case 'CREATE':
      return validator
        .validateCreate(secretOf(request.object, namespace, 'new'))
        .then((report) => fromReport(uid, report));
    case 'UPDATE':
      return validator
        .validateUpdate(
          secretOf(request.oldObject, namespace, 'old'),
          secretOf(request.object, namespace, 'new'),
        )
        .then((report) => fromReport(uid, report));
    case 'DELETE':
      return validator
        .validateDelete(secretOf(request.oldObject, namespace, 'old'))
        .then((report) => fromReport(uid, report));
    case 'CONNECT':
      return allowed(uid);
  }
}

/** Reviews one admission request; never throws. */
export async function reviewAdmission(
  request: AdmissionRequest,
  options: DispatchOptions,
): Promise<AdmissionResponse> {
  const started = performance.now();
  const secret = `${request.namespace}/${request.name}`;
  const isSecret = request.kind.group === '' && request.kind.kind === 'Secret';
  const validator = isSecret ? options.routes(request.namespace, request.name) : undefined;
  let response: AdmissionResponse;
  let failure: string | undefined;
  if (validator === undefined) {
    response = allowed(request.uid);
  } else {
    try {
      response = await withDeadline(
        Promise.resolve(validate(validator, request)),
        options.deadlineMs,
      );
    } catch (error) {
      failure = describeError(error);
      response =
        error instanceof DeadlineExceeded
          ? errored(
              request.uid,
              504,
              `Validation of Secret ${secret} did not finish within ${options.deadlineMs} ms; retry, and check the controller's logs if it persists.`,
            )
          : error instanceof InvalidObject
            ? errored(request.uid, 400, `Cannot validate Secret ${secret}: ${failure}`)
            : errored(request.uid, 500, `Validation of Secret ${secret} failed: ${failure}`);
    }
  }
  options.onReview?.({
    uid: request.uid,
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
