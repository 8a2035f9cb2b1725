/**
 * The render process (started by render-process.ts, never run by hand): Liquid rendering
 * away from the controller's event loop, under a V8 heap limit the parent sets and a time
 * limit the parent enforces by killing it. It holds no credentials: its environment holds only
 * the compile cache directory and it receives only templates and the template context (no
 * certificate or key material).
 *
 * Parsed templates stay warm: a request names its templates with a key (a stored
 * HAProxyTemplateConfig's uid/resourceVersion) and the parse is reused while the key does
 * (kept-parses.ts). So does what each file rendered last (kept-files.ts): a file whose names
 * hold the values they held then is that text again.
 */
import { flushCompileCache } from 'node:module';
import type { Liquid } from 'liquidjs';
import { describeError } from '../../errors.ts';
import { ContextDecoder } from './context-transfer.ts';
import { KeptFiles } from './kept-files.ts';
import { KeptParses } from './kept-parses.ts';
import { createTemplateEngine, escapeFilterName, renderTemplates } from './template-engine.ts';
import {
  type RenderWorkerLimits,
  type RenderWorkerRequest,
  type RenderWorkerMessage,
  filesToSend,
  readRenderWorkerLimits,
  readRenderWorkerRequest,
} from './render-worker-protocol.ts';

/** What this process keeps between requests. */
interface WorkerState {
  readonly engine: Liquid;
  readonly parses: KeptParses;
  readonly contexts: ContextDecoder;
  readonly kept: KeptFiles;
  /** The texts of the last successful outcome sent, by path. */
  readonly sent: Map<string, string>;
}

function send(message: RenderWorkerMessage): void {
  process.send?.(message);
}

/** The limits the controller started this process with; exits when it was started by hand. */
function startedLimits(): RenderWorkerLimits {
  const limits = readRenderWorkerLimits(process.argv[2]);
  if (process.send === undefined || typeof limits === 'string') {
    process.stderr.write(
      `render-worker: ${typeof limits === 'string' ? limits : 'no IPC channel'}; it is started by the controller, not by hand.\n`,
    );
    process.exit(2);
  }
  return limits;
}

function handle(state: WorkerState, request: RenderWorkerRequest): void {
  // Decoded first, whatever follows: the ids it defines and drops are the controller's view.
  const context = state.contexts.decode(request.context);
  if (typeof context === 'string') {
    // The controller and this process no longer agree on the ids: it restarts this process.
    process.stderr.write(`render-worker: the render request's context is refused: ${context}\n`);
    process.exit(2);
  }
  const parsed = state.parses.parsedFor(request.key, request.config);
  if ('message' in parsed) {
    send({ id: request.id, outcome: { ok: false, stage: 'config', ...parsed } });
    return;
  }
  const outcome = renderTemplates(state.engine, parsed, context, {
    limitMs: request.limitMs,
    kept: state.kept,
    onFile: (field) => {
      send({ id: request.id, started: field });
    },
  });
  send({
    id: request.id,
    outcome: outcome.ok
      ? { ok: true, files: filesToSend(outcome.files, state.sent) }
      : { ...outcome, stage: 'template' },
  });
}

function main(): void {
  const limits = startedLimits();
  // The compiled code of its modules is written now: the parent kills this process, so Node's
  // own write at exit never comes (a no-op without NODE_COMPILE_CACHE).
  flushCompileCache();
  // The parent ended (or was killed) before it stopped this process: nothing is left to do.
  process.on('disconnect', () => {
    process.exit(0);
  });
  const engine = createTemplateEngine(limits);
  const state: WorkerState = {
    engine,
    parses: new KeptParses(engine),
    contexts: new ContextDecoder(),
    kept: new KeptFiles(escapeFilterName(engine)),
    sent: new Map(),
  };
  process.on('message', (message: unknown) => {
    const request = readRenderWorkerRequest(message);
    if (typeof request === 'string') {
      process.stderr.write(`render-worker: ${request}\n`);
      process.exit(2);
    }
    try {
      handle(state, request);
    } catch (error) {
      send({
        id: request.id,
        outcome: {
          ok: false,
          stage: 'template',
          field: 'spec',
          message: `Rendering failed: ${describeError(error)}`,
        },
      });
    }
  });
}

main();
