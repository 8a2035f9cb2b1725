/**
 * Where `haproxy -c` says a configuration fails, read from the reduced message (the only form
 * HAProxy's output takes outside the check, src/haproxy/message.ts): one location
 * per alert, the innermost file and line named (a crt-list or map line rather than the `bind`
 * or rule line that loads it), with the reduced reason. Pure.
 *
 *   [ALERT] haproxy.cfg:13: 'timeout server' has an invalid time value
 *   [ALERT] haproxy.cfg:10: 'bind' cannot load a certificate, key or crt-list it names (in ssl/certificates.list:2)
 */
import { readReducedMessage } from '../../haproxy/message.ts';

export interface CheckFailureLocation {
  /** The file, relative to the configuration's directory. */
  readonly file: string;
  readonly line: number;
  /** The reduced reason: a sentence from a fixed list, nothing quoted from HAProxy. */
  readonly reason: string;
}

/** The locations of the alerts in a reduced message; warnings are not failures. */
export function checkFailureLocations(message: string): CheckFailureLocation[] {
  return readReducedMessage(message).flatMap((alert) => {
    if (alert.severity !== 'ALERT') return [];
    if (alert.inner !== undefined) return [{ ...alert.inner, reason: alert.reason }];
    return alert.line === undefined
      ? []
      : [{ file: alert.file, line: alert.line, reason: alert.reason }];
  });
}
