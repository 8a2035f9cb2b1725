/**
 * Whether the running Node fits the package's `engines.node` range. Pure, and written for old
 * Node too: `main.ts` runs it before loading anything that an old Node cannot evaluate.
 */

/** package.json's `engines.node`, read from the parsed manifest; '' when it has none. */
export function enginesNode(manifest: unknown): string {
  if (typeof manifest !== 'object' || manifest === null || !('engines' in manifest)) return '';
  const engines: unknown = manifest.engines;
  if (typeof engines !== 'object' || engines === null || !('node' in engines)) return '';
  return typeof engines.node === 'string' ? engines.node : '';
}

/** The lowest version an `engines.node` range of the form `>=22.19` admits. */
function lowestVersion(range: string): readonly number[] | undefined {
  const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  if (match === null) return undefined;
  // An absent minor or patch group is undefined at run time, whatever exec's type says.
  return match.slice(1).map((part: string | undefined) => Number(part ?? '0'));
}

function older(found: readonly number[], lowest: readonly number[]): boolean {
  for (let i = 0; i < lowest.length; i += 1) {
    const a = found[i] ?? 0;
    const b = lowest[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

/** `>=22.19` → `22.19`; `>=22.0.0` → `22`. */
function spell(lowest: readonly number[]): string {
  const parts = [...lowest];
  while (parts.length > 1 && parts.at(-1) === 0) parts.pop();
  return parts.join('.');
}

/**
 * The one line to print when `found` (`process.versions.node`, e.g. `20.20.2`) is older than
 * `range` (package.json's `engines.node`, `>=` form) admits; undefined when it fits.
 */
export function nodeVersionProblem(found: string, range: string): string | undefined {
  const lowest = lowestVersion(range);
  if (lowest === undefined) {
    return `haptic: package.json's engines.node is "${range}", not a ">=major.minor" range; reinstall the haptic package.`;
  }
  const version = found.split('.').map(Number);
  if (!older(version, lowest)) return undefined;
  return `haptic needs Node ≥ ${spell(lowest)} (found v${found}): use .tools/bin/node or put .tools/bin on PATH`;
}

/**
 * Whether `found` takes `enableCompileCache({ directory, portable })` (Node 24.12 on; an older
 * Node takes only the directory).
 */
export function takesPortableCompileCache(found: string): boolean {
  return !older(found.split('.').map(Number), [24, 12]);
}
