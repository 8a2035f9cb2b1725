#!/usr/bin/env node
/**
 * The `haptic` binary. ESM evaluates every static import before the importing module's own
 * code, and haptic's modules use what an old Node lacks (Set methods, for one), so this entry
 * imports only a Node built-in and the version check, and loads the program dynamically once
 * the running Node fits package.json's `engines.node`.
 */
import { readFileSync } from 'node:fs';
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
await import('./program.ts');
