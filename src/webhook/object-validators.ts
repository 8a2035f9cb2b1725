/**
 * Validators for objects other than the release's Secrets (Ingresses, HAProxyTemplateConfigs):
 * the third admission layer for any kind. They receive the objects as the AdmissionReview
 * carries them (untyped; each validator reads its kind at its edge) and return the shared
 * validator's reports. They never see HTTP.
 */
import type { ValidationReport } from '../validation/index.ts';

export interface ObjectAdmissionValidator {
  validateCreate(next: unknown, namespace: string): Promise<ValidationReport>;
  validateUpdate(old: unknown, next: unknown, namespace: string): Promise<ValidationReport>;
  validateDelete(old: unknown, namespace: string): Promise<ValidationReport>;
}

/**
 * The validator for an object of a kind (`group` empty for the core group) with this namespace
 * and name, or undefined when none: the object is then allowed without being looked at.
 */
export type KindRoutes = (
  kind: { readonly group: string; readonly version: string; readonly kind: string },
  namespace: string,
  name: string,
) => ObjectAdmissionValidator | undefined;
