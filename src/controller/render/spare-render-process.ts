/**
 * A render process started before any renderer asks for one: a command that knows it will
 * render starts it while it waits on something else, and the next TemplateRenderer with the
 * same limits takes it instead of starting its own.
 */
import type { ChildProcess } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { type TemplateLimits, defaultTemplateLimits } from './template-engine.ts';
import { type RenderProcess, forkRenderProcess } from './render-process.ts';

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
export function takeSpare(limits: TemplateLimits): RenderProcess | undefined {
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
