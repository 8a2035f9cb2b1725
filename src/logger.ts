/**
 * The one way haptic builds its JSON logs (pino): ISO timestamps, textual levels, the
 * component (`agent`, `webhook`, `certificates renew`, ...) on every line, and redaction of
 * anything that could carry a private key or a password.
 */
import { pino } from 'pino';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /** Names the process role on every line. */
  readonly component: string;
  /** @default 'info' */
  readonly level?: string;
  /**
   * Write synchronously, so no line is lost however the process ends (short Jobs that may be
   * killed). Long-running servers keep the default asynchronous destination.
   * @default false
   */
  readonly sync?: boolean;
}

const redactedPaths = [
  'privateKeyPem',
  'key',
  'password',
  '*.privateKeyPem',
  '*.key',
  '*.password',
  '*["tls.key"]',
  '*.dataplane_password',
];

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { component: options.component },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: redactedPaths,
    },
    pino.destination({ dest: 1, sync: options.sync ?? false }),
  );
}
