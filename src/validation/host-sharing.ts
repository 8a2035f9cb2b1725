/**
 * The annotation with which an owner shares its hosts with other namespaces
 * (`haproxy-haptic.org/host-shared-with`, see host-ownership.ts): its name, how its value reads,
 * and the check of that value. Pure.
 */
import { type IngressProblem, annotationPrefix } from './ingress-checks.ts';

/** The annotation's name under annotationPrefix, as ValidIngress.annotations holds it. */
export const hostSharingAnnotation = 'host-shared-with';

const namespacePattern = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The entries of the annotation's value: comma-separated, blanks around them ignored. */
export function sharingEntries(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** A value of the sharing annotation that is not a list of namespaces, or `*`. */
export function hostSharingProblem(
  annotations: Readonly<Record<string, string>>,
  ingress: string,
): IngressProblem | undefined {
  const value = annotations[hostSharingAnnotation];
  if (value === undefined) return undefined;
  const bad = sharingEntries(value).find((entry) => entry !== '*' && !namespacePattern.test(entry));
  if (bad === undefined) return undefined;
  const key = `${annotationPrefix}${hostSharingAnnotation}`;
  return {
    field: `metadata.annotations[${JSON.stringify(key)}]`,
    message: `Ingress ${ingress} has ${key} naming ${JSON.stringify(bad.slice(0, 80))}, which is not a namespace; list namespace names separated by commas, or * to share this Ingress's hosts with every namespace.`,
  };
}
