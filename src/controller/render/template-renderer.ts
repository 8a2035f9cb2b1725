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
import { describeError } from '../../errors.ts';
import type { TemplateConfig } from '../../api/template-config.ts';
import { type TemplateLimits, defaultTemplateLimits, templateField } from './template-engine.ts';
import {
  type RenderWorkerOutcome,
  type RenderWorkerRequest,
  readRenderWorkerMessage,
  receivedFiles,
} from './render-worker-protocol.ts';
import { type RenderProcess, forkRenderProcess } from './render-process.ts';
import { takeSpare } from './spare-render-process.ts';

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
