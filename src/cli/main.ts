#!/usr/bin/env node
/**
 * The `haptic` binary. ESM evaluates every static import before the importing module's own
 * code, and haptic's modules use what an old Node lacks (Set methods, for one), so this entry
 * imports only a Node built-in and the version check, and loads the program dynamically once
 * the running Node fits package.json's `engines.node`.
 *
 * It then turns on Node's module compile cache before anything else loads: compiling the
 * dependencies (the Kubernetes client above all) is most of a short command's start-up. The
 * directory is Node's own choice: `NODE_COMPILE_CACHE` when set (the image points it at a cache
 * filled when the image is built), else `<tmpdir>/node-compile-cache`. A directory that cannot be
 * created or written (a read-only root) only leaves the cache off or unwritten: Node reports
 * that in the returned status, never by throwing, and every command runs the same without it.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
import { readFileSync } from 'node:fs';
// The default export: a named import of enableCompileCache would fail to link on a Node too old
// to have it, before the version check below could say so.
import nodeModule from 'node:module';
import { enginesNode, nodeVersionProblem } from './node-version.ts';

const manifest: unknown = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
const problem = nodeVersionProblem(process.versions.node, enginesNode(manifest));
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  // 2: the environment does not fit, like every usage or environment error of haptic.
  process.exit(2);
}
nodeModule.enableCompileCache();
await import('./program.ts');
