/**
 * The third admission layer for any kind, and the one place that routes by kind. Validators
 * receive the objects as the AdmissionReview carries them (untyped; each reads its kind at its
 * edge, see `secretValidator`) and return the shared validator's reports. They never see HTTP.
 */
import type { ValidationReport } from '../validation/index.ts';
import type { ReviewContext } from './review-context.ts';

/** `review`: the answer's deadline and whether it is still awaited, for validators that wait. */
export interface ObjectAdmissionValidator {
  validateCreate(
    next: unknown,
    namespace: string,
    review: ReviewContext,
  ): Promise<ValidationReport>;
  validateUpdate(
    old: unknown,
    next: unknown,
    namespace: string,
    review: ReviewContext,
  ): Promise<ValidationReport>;
  validateDelete(old: unknown, namespace: string, review: ReviewContext): Promise<ValidationReport>;
}

/** Group, version and kind of the object under review (`group` empty for the core group). */
export interface ReviewedKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * The validator for an object of a kind with this namespace and name, or undefined when none:
 * the object is then allowed without being looked at.
 */
export type KindRoutes = (
  kind: ReviewedKind,
  namespace: string,
  name: string,
) => ObjectAdmissionValidator | undefined;

/** The validator for an object of one kind, by namespace and name. */
export type NameRoutes = (namespace: string, name: string) => ObjectAdmissionValidator | undefined;

/** Thrown by a validator whose object cannot be read as its kind: answered with 400. */
export class InvalidObject extends Error {}

/** Routes by `group/kind` (`/Secret` for the core group); kinds not in `table` get no validator. */
export function routeByKind(table: Readonly<Record<string, NameRoutes>>): KindRoutes {
  const routes = new Map(Object.entries(table));
  return (kind, namespace, name) => routes.get(`${kind.group}/${kind.kind}`)?.(namespace, name);
}

/** The first validator any of `routes` has for an object. */
export function firstRoute(...routes: readonly KindRoutes[]): KindRoutes {
  return (kind, namespace, name) => {
    for (const route of routes) {
      const validator = route(kind, namespace, name);
      if (validator !== undefined) return validator;
    }
    return undefined;
  };
}
