/**
 * A render process (render-worker.ts) as the controller starts it: with a V8 heap limit of its
 * own, an environment of nothing but the compile cache, no stdout, and stderr kept (a little
 * of it) to tell running out of heap from other crashes. TemplateRenderer gives it work;
 * spare-render-process.ts starts one ahead of time.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { getCompileCacheDir } from 'node:module';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeError } from '../../errors.ts';
import { packageRoot } from '../../version.ts';
import { ContextEncoder } from './context-transfer.ts';
import type { TemplateLimits } from './template-engine.ts';
import type { RenderWorkerLimits } from './render-worker-protocol.ts';

/** stderr kept from a render process, to tell running out of heap from other crashes. */
const maxStderr = 4096;

/**
 * The render process's entry: beside this module in the sources; when built, at its own place
 * in dist/, which this module's chunk is not (dev/build-dist.ts).
 */
const workerFile = fileURLToPath(
  extname(fileURLToPath(import.meta.url)) === '.ts'
    ? new URL('./render-worker.ts', import.meta.url)
    : new URL('dist/controller/render/render-worker.js', packageRoot),
);

/** A started render process and what the controller keeps of its conversation with it. */
export interface RenderProcess {
  readonly child: ChildProcess;
  readonly limits: TemplateLimits;
  stderr: string;
  /** The texts of the last successful outcome it sent, by path (it sends changed ones only). */
  readonly received: Map<string, string>;
  /** Lasting items by the ids this process was sent (a new process starts with none). */
  readonly encoder: ContextEncoder;
}

/**
 * The render process's whole environment: only the compile cache this process uses (main.js
 * turns it on), so the process skips compiling its modules as the command did. Never
 * the rest: the environment may hold credentials, and templates are untrusted.
 */
function renderProcessEnv(): Record<string, string> {
  const cacheDir = getCompileCacheDir();
  // Portable as main.js turns it on: entries keyed by paths relative to the directory.
  return cacheDir === undefined
    ? {}
    : { NODE_COMPILE_CACHE: cacheDir, NODE_COMPILE_CACHE_PORTABLE: '1' };
}

/** Starts a render process, idle (it keeps nothing alive) until a renderer gives it work. */
export function forkRenderProcess(limits: TemplateLimits): RenderProcess {
  const workerLimits: RenderWorkerLimits = {
    parseLimit: limits.parseLimit,
    renderLimitMs: limits.renderLimitMs,
    memoryLimit: limits.memoryLimit,
  };
  const child = fork(workerFile, [JSON.stringify(workerLimits)], {
    execArgv: [`--max-old-space-size=${limits.heapMb}`],
    env: renderProcessEnv(),
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const renderProcess: RenderProcess = {
    child,
    limits,
    stderr: '',
    received: new Map(),
    encoder: new ContextEncoder(),
  };
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (renderProcess.stderr.length < maxStderr) renderProcess.stderr += chunk.slice(0, maxStderr);
  });
  child.on('error', (error) => {
    renderProcess.stderr += describeError(error);
  });
  child.unref();
  child.channel?.unref();
  return renderProcess;
}
