/**
 * Findings: what every rule returns. A check is a tiny function over one subject that returns a
 * finding or nothing; chains run checks in order (the first finding, or every finding).
 */
import type { ValidationCode } from './codes.ts';

/** `error` rejects; `warning` is shown and lets the change through. */
export type Severity = 'error' | 'warning';

export interface Finding {
  readonly code: ValidationCode;
  readonly severity: Severity;
  /**
   * Where the problem is: a values path (`haproxy.agent.tls.serverName`), a Secret key
   * (`secret/haptic-agent-server-tls/tls.crt`) or a flag (`--expect-chart-version`).
   */
  readonly path: string;
  /** A full sentence that names the object and says what to do. */
  readonly message: string;
}

export type Check<T> = (subject: T) => Finding | undefined;

export function error(code: ValidationCode, path: string, message: string): Finding {
  return { code, severity: 'error', path, message };
}

export function warning(code: ValidationCode, path: string, message: string): Finding {
  return { code, severity: 'warning', path, message };
}

/** Runs checks in order and returns the first finding. */
export function firstFinding<T>(subject: T, checks: readonly Check<T>[]): Finding | undefined {
  for (const check of checks) {
    const found = check(subject);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Runs every check and returns all findings, in check order. */
export function everyFinding<T>(subject: T, checks: readonly Check<T>[]): Finding[] {
  return checks.flatMap((check) => check(subject) ?? []);
}

export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((found) => found.severity === 'error');
}

/** The validator's answer: `allowed` is false as soon as one finding is an error. */
export interface ValidationReport {
  readonly allowed: boolean;
  readonly findings: readonly Finding[];
}

export function report(findings: readonly Finding[]): ValidationReport {
  return { allowed: !hasErrors(findings), findings };
}

/** A sentence as a clause: without its final period. */
export function clause(sentence: string): string {
  return sentence.trim().replace(/\.$/, '');
}

/** Path of a Secret, or of one of its keys, in findings. */
export function secretPath(name: string, key?: string): string {
  return key === undefined ? `secret/${name}` : `secret/${name}/${key}`;
}
