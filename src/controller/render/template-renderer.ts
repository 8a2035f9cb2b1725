/**
 * Template rendering off the controller's event loop, under hard limits: a child process
 * (render-worker.ts) renders one request at a time with a V8 heap limit of its own, and is
 * killed when the time limit (or what is left of a caller's deadline) runs out, whatever the
 * template is doing (Liquid checks its own limits only between tags, and counts neither
 * loops nor output). A killed or crashed process is replaced on the next request; the
 * request gets a template failure naming the file, the limit and the fix.
 *
 * Why a process and not a worker thread: a worker's `resourceLimits` do not contain every
 * allocation; `{{ (1..8000000) | join: "," }}` under a 256 MB worker limit aborted the whole
 * controller ("FATAL ERROR: Reached heap limit", nodejs/node#47224), and `--max-old-space-size`
 * overrides them (nodejs/node#43991). A process that runs out of heap takes only itself down.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { getCompileCacheDir } from 'node:module';
import { getPriority, setPriority } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeError } from '../../errors.ts';
import { packageRoot } from '../../version.ts';
import { ContextEncoder } from './context-transfer.ts';
import type { TemplateConfig } from '../../api/template-config.ts';
import { type TemplateLimits, defaultTemplateLimits, templateField } from './template-engine.ts';
import {
  type RenderWorkerLimits,
  type RenderWorkerOutcome,
  type RenderWorkerRequest,
  readRenderWorkerMessage,
  receivedFiles,
} from './render-worker-protocol.ts';

export interface RenderJob {
  /** Reuse the parse while the key stays (a stored config's uid/resourceVersion). */
  readonly key: string | undefined;
  readonly config: TemplateConfig;
  readonly context: Record<string, unknown>;
  /** `performance.now()` by which rendering must end (an admission review's deadline). */
  readonly deadline?: number;
}

/** Time the process gets beyond the limit to report Liquid's own limit error first. */
const graceMs = 200;
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

interface Pending {
  readonly job: RenderJob;
  readonly resolve: (outcome: RenderWorkerOutcome) => void;
}

interface Running extends Pending {
  readonly id: number;
  readonly renderProcess: RenderProcess;
  readonly limitMs: number;
  readonly byDeadline: boolean;
  readonly timer: NodeJS.Timeout;
  field: string;
  timedOut: boolean;
}

interface RenderProcess {
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
function forkRenderProcess(limits: TemplateLimits): RenderProcess {
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

/** A render process started before any renderer asked for one (`startRenderProcess`). */
let spare: RenderProcess | undefined;

/**
 * How much nicer than this process a render process started in advance runs, for its whole
 * life (a niceness cannot be lowered again without privilege): it starts while the command
 * waits on something that needs the CPU more (preflight: helm, whose output the render waits
 * for anyway), so it boots on what that leaves. Its render later runs beside the command's own
 * work (preflight's parse of helm's output) and gets the CPU that work leaves; when the command
 * waits for it, nothing of the command competes. Measured with `bench/preflight.ts`: a live
 * preflight 3-8 ms sooner on two cores.
 */
export const spareNiceness = 10;

/**
 * Starts a render process now, for the next renderer with these limits to take instead of
 * starting its own: a command that knows it will render (`haptic preflight`) starts it while
 * it waits on something else, so Node's start-up and the module loading of the process are
 * not on its path (and runs it `spareNiceness` nicer). Returns the stop: it kills the process
 * unless a renderer took it (then the renderer's `close` does). The process also exits by
 * itself when this one ends (its IPC channel closes), so a signal or a crash leaves nothing
 * behind.
 */
export function startRenderProcess(limits: TemplateLimits = defaultTemplateLimits): () => void {
  const started = forkRenderProcess(limits);
  lowerPriority(started.child);
  if (spare !== undefined) spare.child.kill('SIGKILL');
  spare = started;
  return () => {
    if (spare !== started) return;
    spare = undefined;
    started.child.kill('SIGKILL');
  };
}

/**
 * The child's priority `spareNiceness` below this process's (19 at most). Raising a niceness
 * needs no privilege. Best effort: on Linux it applies to the child's main thread and to the
 * threads that thread starts later, not to a thread already started (the call comes right
 * after the fork, before Node's start-up). Where it fails (the child already ended, a system
 * that refuses), the child keeps this process's priority and only competes more.
 */
function lowerPriority(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    setPriority(child.pid, Math.min(19, getPriority() + spareNiceness));
  } catch {
    // Left at this process's priority (see above).
  }
}

/** The spare render process, if it runs with exactly these limits and has not exited. */
function takeSpare(limits: TemplateLimits): RenderProcess | undefined {
  const taken = spare;
  if (taken === undefined || !sameLimits(taken.limits, limits)) return undefined;
  spare = undefined;
  if (taken.child.exitCode === null && taken.child.signalCode === null) return taken;
  return undefined;
}

function sameLimits(a: TemplateLimits, b: TemplateLimits): boolean {
  return (
    a.heapMb === b.heapMb &&
    a.parseLimit === b.parseLimit &&
    a.renderLimitMs === b.renderLimitMs &&
    a.memoryLimit === b.memoryLimit
  );
}

function failure(field: string, message: string): RenderWorkerOutcome {
  return { ok: false, stage: 'template', field, message };
}

const stopping = 'The controller is stopping; nothing is rendered.';

export class TemplateRenderer {
  readonly #limits: TemplateLimits;
  readonly #queue: Pending[] = [];
  #process: RenderProcess | undefined;
  #running: Running | undefined;
  #nextId = 1;
  #closed = false;

  constructor(limits: TemplateLimits = defaultTemplateLimits) {
    this.#limits = limits;
  }

  /** Renders every file of `job.config` with `job.context`; never throws. */
  render(job: RenderJob): Promise<RenderWorkerOutcome> {
    return new Promise((resolve) => {
      if (this.#closed) {
        resolve(failure(firstField(job.config), stopping));
        return;
      }
      this.#queue.push({ job, resolve });
      this.#next();
    });
  }

  /** Stops the render process; requests still waiting fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) {
      pending.resolve(failure(firstField(pending.job.config), stopping));
    }
    const renderProcess = this.#process;
    if (renderProcess === undefined) return;
    renderProcess.child.ref();
    const exited = new Promise<void>((resolve) => {
      renderProcess.child.once('exit', () => {
        resolve();
      });
    });
    renderProcess.child.kill('SIGKILL');
    await exited;
  }

  #next(): void {
    if (this.#running !== undefined) return;
    const pending = this.#queue.shift();
    if (pending === undefined) {
      this.#idle();
      return;
    }
    const { job } = pending;
    const left =
      job.deadline === undefined ? Number.POSITIVE_INFINITY : job.deadline - performance.now();
    const limitMs = Math.floor(Math.min(this.#limits.renderLimitMs, left));
    const label = configLabel(job.config);
    if (limitMs <= 0) {
      pending.resolve(
        failure(
          firstField(job.config),
          `${label}: rendering did not start before the deadline of the request; retry when the controller is less busy.`,
        ),
      );
      this.#next();
      return;
    }
    const renderProcess = this.#start();
    const id = this.#nextId++;
    const running: Running = {
      ...pending,
      id,
      renderProcess,
      limitMs,
      byDeadline: left < this.#limits.renderLimitMs,
      field: firstField(job.config),
      timedOut: false,
      timer: setTimeout(() => {
        running.timedOut = true;
        this.#kill(renderProcess);
      }, limitMs + graceMs),
    };
    this.#running = running;
    renderProcess.child.ref();
    renderProcess.child.channel?.ref();
    const request: RenderWorkerRequest = {
      id,
      key: job.key,
      config: job.config,
      context: renderProcess.encoder.encode(job.context),
      limitMs,
    };
    renderProcess.child.send(request, (error) => {
      if (error === null) return;
      this.#kill(renderProcess);
      this.#finish(
        id,
        failure(
          running.field,
          `${label}: the render process did not take the request: ${describeError(error)}`,
        ),
      );
    });
  }

  #start(): RenderProcess {
    if (this.#process !== undefined) return this.#process;
    const renderProcess = takeSpare(this.#limits) ?? forkRenderProcess(this.#limits);
    const { child } = renderProcess;
    this.#process = renderProcess;
    child.on('message', (value: unknown) => {
      const message = readRenderWorkerMessage(value);
      if (message === undefined) return;
      const running = this.#running;
      if ('started' in message) {
        if (running?.id === message.id) running.field = message.started;
        return;
      }
      const { outcome } = message;
      // Every successful outcome is read, so `received` stays what the process sent last.
      const files = outcome.ok ? receivedFiles(outcome.files, renderProcess.received) : [];
      if (running?.id !== message.id) return;
      if (typeof files === 'string') {
        this.#kill(renderProcess);
        this.#finish(
          message.id,
          failure(
            running.field,
            `${configLabel(running.job.config)}: the render process answered out of turn (${files}); it is restarted for the next render.`,
          ),
        );
      } else {
        this.#finish(message.id, outcome.ok ? { ok: true, files } : outcome);
      }
    });
    child.on('exit', (code, signal) => {
      if (this.#process === renderProcess) this.#process = undefined;
      const running = this.#running;
      if (running?.renderProcess === renderProcess) {
        this.#finish(running.id, this.#stopped(running, code, signal));
      }
    });
    return renderProcess;
  }

  /** Kills a render process; the next request starts a new one. */
  #kill(renderProcess: RenderProcess): void {
    if (this.#process === renderProcess) this.#process = undefined;
    renderProcess.child.kill('SIGKILL');
  }

  #stopped(
    running: Running,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): RenderWorkerOutcome {
    if (this.#closed) return failure(running.field, stopping);
    const { stderr } = running.renderProcess;
    const label = `${configLabel(running.job.config)}: rendering ${running.field}`;
    if (running.timedOut) {
      const limit = running.byDeadline
        ? `the ${running.limitMs} ms left before the request's deadline`
        : `${running.limitMs} ms (the render time limit)`;
      return failure(
        running.field,
        `${label} did not finish within ${limit} and was stopped. Loops, ranges and output count against this limit: loop over the model's lists (routes, backends, certificates) instead of large ranges, and render only what HAProxy needs.`,
      );
    }
    if (/heap out of memory|Allocation failed/.test(stderr)) {
      return failure(
        running.field,
        `${label} needed more than the ${this.#limits.heapMb} MB the render process may use and was stopped. Ranges, loops and filters that build large strings or lists all allocate: loop over the model's lists instead of large ranges.`,
      );
    }
    return failure(
      running.field,
      `${label} stopped the render process (exit code ${String(code)}, signal ${String(signal)}${firstLine(stderr)}); it is restarted for the next render.`,
    );
  }

  #finish(id: number, outcome: RenderWorkerOutcome): void {
    const running = this.#running;
    if (running?.id !== id) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    running.resolve(outcome);
    this.#next();
  }

  /** An idle render process does not keep the controller (or a script) alive. */
  #idle(): void {
    const child = this.#process?.child;
    child?.unref();
    child?.channel?.unref();
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]?.trim() ?? '';
  return line === '' ? '' : `: ${line.slice(0, 200)}`;
}

function configLabel(config: TemplateConfig): string {
  return `HAProxyTemplateConfig ${config.namespace}/${config.name}`;
}

function firstField(config: TemplateConfig): string {
  const [first] = config.files;
  return first === undefined ? 'spec' : templateField(first);
}
