// make build (and image/assemble.sh, into the image): dist/ from src/, bundled by esbuild.
//
//   node dev/build-dist.ts [--outdir DIR] [--no-sourcemap]
//
// Two entries keep their place under src/: dist/cli/main.js (the `haptic` binary) and
// dist/controller/render/render-worker.js (the process render-process.ts forks). Every module
// loaded later (each command, the validator, the controller, ...) is a chunk directly in dist/,
// one level below the package root. The npm dependencies stay in node_modules. A command then
// loads a few chunks instead of a module per source file: `haptic preflight` loaded about 115
// of its own modules, and module loading is on its critical path (bench/preflight.ts).
//
// The directory is emptied first, so no chunk of an earlier build is left behind.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { projectRoot } from './lib/tools.ts';

const { values } = parseArgs({
  options: {
    outdir: { type: 'string', default: join(projectRoot, 'dist') },
    'no-sourcemap': { type: 'boolean', default: false },
  },
});
const outdir = values.outdir;

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: projectRoot,
  entryPoints: ['src/cli/main.ts', 'src/controller/render/render-worker.ts'],
  outbase: 'src',
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'external',
  chunkNames: '[name]-[hash]',
  // No source maps in the image: it has no TypeScript sources to map to.
  sourcemap: values['no-sourcemap'] ? false : 'linked',
  sourcesContent: false,
  logLevel: 'warning',
});
