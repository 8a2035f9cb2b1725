/**
 * Where `haproxy -c` says a configuration fails: one location per alert, the innermost file
 * and line HAProxy names (a crt-list or map line rather than the `bind` or rule line that
 * loads it), with HAProxy's reason without its location prefixes. Pure.
 *
 *   [ALERT] config : parsing [haproxy.cfg:13] : unexpected character 'p' in 'timeout server'
 *   [ALERT] config : parsing [haproxy.cfg:10] : 'bind :8443' in section 'frontend' : 'crt-list' :
 *     error processing line 2 in file 'ssl/certificates.list' : unable to load SSL certificate
 *     into SSL Context 'ssl/app_weak.pem'.
 *   ... regex '(bad' is invalid (...) at line 2 of file 'maps/r.map'.
 */

export interface CheckFailureLocation {
  /** The file as HAProxy names it (relative, or under the directory the check ran in). */
  readonly file: string;
  readonly line: number;
  /** HAProxy's reason: the last part of the alert, after its location prefixes. */
  readonly reason: string;
  /** Names HAProxy quotes in the alert ('ssl/app_weak.pem'), some of them files. */
  readonly quoted: readonly string[];
}

const nestedLocation = /line (\d+) (?:in|of) file '([^']+)'/;
const bracketLocation = /\[([^\]\s]+):(\d+)\]/;

function reasonOf(alert: string): string {
  const text = alert
    .replace(/^\[\w+\]\s*(\(\d+\)\s*:\s*)?/, '')
    .replace(/^config\s*:\s*/, '')
    .trim();
  const parts = text.split(' : ');
  const last = parts.length > 1 ? (parts.at(-1) ?? text) : text;
  return last.replace(/^[Pp]arsing \[[^\]]*\]\s*:?\s*/, '').trim();
}

/** The locations of the alerts in `message`; warnings and notices are not failures. */
export function checkFailureLocations(message: string): CheckFailureLocation[] {
  const locations: CheckFailureLocation[] = [];
  for (const alert of message.split('\n')) {
    if (/^\s*\[(WARNING|NOTICE)\]/.test(alert)) continue;
    const nested = nestedLocation.exec(alert);
    const bracket = bracketLocation.exec(alert);
    const [, file, line] = nested === null ? (bracket ?? []) : [nested[0], nested[2], nested[1]];
    if (file === undefined || line === undefined) continue;
    locations.push({
      file,
      line: Number(line),
      reason: reasonOf(alert),
      quoted: [...alert.matchAll(/'([^']+)'/g)].map((match) => match[1] ?? ''),
    });
  }
  return locations;
}
