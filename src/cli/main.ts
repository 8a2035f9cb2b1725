#!/usr/bin/env node
/**
 * The `haptic` binary. ESM evaluates every static import before the importing module's own
 * code, and haptic's modules use what an old Node lacks (Set methods, for one), so this entry
 * imports only a Node built-in and the version check, and loads the program dynamically once
 * the running Node fits package.json's `engines.node`.
 *
 * It then turns on Node's module compile cache before anything else loads, in the package's
 * own `node_modules/.cache/haptic` (`NODE_COMPILE_CACHE` wins when set). Where that directory is
 * writable (a checkout, a local install) repeated commands skip compiling their modules. Where
 * it is not (the image's read-only root) Node reports the failure in the returned status, never
 * by throwing, and nothing is written: a one-shot Job with a writable but fresh /tmp would pay
 * for writing a cache no later run reads, so the cache never lives in the temporary directory.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off. Node names the cache's subdirectory by the user
 * id as well: a cache built for the image must be written by the user the image runs as.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// The default export: a named import of enableCompileCache would fail to link on a Node too old
// to have it, before the version check below could say so.
import nodeModule from 'node:module';
import { enginesNode, nodeVersionProblem, takesPortableCompileCache } from './node-version.ts';

const manifest: unknown = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
const problem = nodeVersionProblem(process.versions.node, enginesNode(manifest));
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  // 2: the environment does not fit, like every usage or environment error of haptic.
  process.exit(2);
}
const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/haptic', import.meta.url));
nodeModule.enableCompileCache(
  // Portable: entries keyed by paths relative to the directory, so a cache written where the
  // image is assembled serves the installed tree.
  takesPortableCompileCache(process.versions.node)
    ? { directory: cacheDir, portable: true }
    : cacheDir,
);
await import('./program.ts');
