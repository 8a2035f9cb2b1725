/**
 * A long-running process (controller, agent, webhook) as components that start one after
 * another and stop in reverse order. A start that fails stops the components started before
 * it and names the one that failed; stopping runs every component's stop even when one
 * throws, and happens once however often it is asked for; the process is ready when every
 * component started so far says it is. Pure: only the components touch the world.
 */
import { HapticError, describeError, errorCodes } from '../errors.ts';

export interface Component {
  /** What the component is, in errors and readiness answers: `informers`, `webhook`. */
  readonly name: string;
  /** Starts it; the next component starts once this has resolved. Absent: nothing to start. */
  start?(): Promise<void> | void;
  /** Stops it; called once, and only after its start succeeded. Absent: nothing to stop. */
  stop?(): Promise<void> | void;
  /**
   * Why it is not ready, or undefined when it is; asked from the moment its start begins
   * until it stops. Absent: always ready.
   */
  notReady?(): string | undefined;
}

/** A component and what it threw. */
export interface ComponentFailure {
  readonly component: string;
  readonly error: unknown;
}

export type Readiness =
  | { readonly ready: true }
  | {
      readonly ready: false;
      /** The components that are not ready, in start order, with why. */
      readonly notReady: readonly { readonly component: string; readonly reason: string }[];
    };

/**
 * A component did not start; the ones started before it were stopped. The message and code
 * are the cause's (or COMPONENT_START_FAILED when it has none), so output reads as before.
 */
export class ComponentStartError extends HapticError {
  readonly component: string;
  /** Components whose stop threw while the started ones were stopped. */
  readonly stopFailures: readonly ComponentFailure[];

  constructor(component: string, cause: unknown, stopFailures: readonly ComponentFailure[]) {
    super(
      cause instanceof HapticError ? cause.code : errorCodes.COMPONENT_START_FAILED,
      describeError(cause),
      { cause },
    );
    this.name = 'ComponentStartError';
    this.component = component;
    this.stopFailures = stopFailures;
  }
}

/** Stops that threw; every other component was stopped all the same. */
export class ComponentStopError extends HapticError {
  readonly failures: readonly ComponentFailure[];

  constructor(failures: readonly ComponentFailure[]) {
    const each = failures.map(
      (failure) => `${failure.component} (${describeError(failure.error)})`,
    );
    super(errorCodes.COMPONENT_STOP_FAILED, `Components failed to stop: ${each.join('; ')}.`);
    this.name = 'ComponentStopError';
    this.failures = failures;
  }
}

interface Running {
  readonly name: string;
  readonly stop: () => Promise<void> | void;
  readonly notReady: (() => string | undefined) | undefined;
}

/** What `Lifecycle.open` does with what it made. */
export interface OpenHooks<T> {
  close?(value: T): Promise<void> | void;
  notReady?(value: T): string | undefined;
}

interface Started<T> {
  readonly value: T;
  readonly stop: () => Promise<void> | void;
  /** The readiness check once started, when the start made it. */
  readonly notReady?: (() => string | undefined) | undefined;
}

export class Lifecycle {
  /** Started components, in start order. */
  readonly #started: Running[] = [];
  /** The component whose start is under way: it counts for readiness already. */
  #starting: Pick<Running, 'name' | 'notReady'> | undefined;
  /** Starts and the stop run one after another, in the order they were asked for. */
  #queue: Promise<unknown> = Promise.resolve();
  #stopping: Promise<void> | undefined;
  /** A start failed and the started components were stopped. */
  #failed = false;

  /** Starts `component` after the components started before it. */
  start(component: Component): Promise<void> {
    return this.#enqueue(component.name, component.notReady?.bind(component), async () => {
      await component.start?.();
      return { value: undefined, stop: () => component.stop?.() };
    });
  }

  /**
   * Starts a component that `make` makes (a listening server, a loaded watcher), which
   * `close` ends and `notReady` asks once it is made; resolves to what `make` made.
   */
  open<T>(name: string, make: () => Promise<T> | T, hooks: OpenHooks<T> = {}): Promise<T> {
    return this.#enqueue(name, undefined, async () => {
      const value = await make();
      return {
        value,
        stop: () => hooks.close?.(value),
        notReady: hooks.notReady === undefined ? undefined : () => hooks.notReady?.(value),
      };
    });
  }

  /**
   * Stops the started components, last started first, each even when another's stop threw;
   * rejects with a ComponentStopError naming those that threw. A second call gets the
   * outcome of the first; nothing starts after it.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#queue.then(async () => {
      const failures = await this.#stopAll();
      if (failures.length > 0) throw new ComponentStopError(failures);
    });
    return this.#stopping;
  }

  /** Ready when every started component (and the one starting) is; else which are not. */
  readiness(): Readiness {
    const counted =
      this.#starting === undefined ? this.#started : [...this.#started, this.#starting];
    const notReady = counted.flatMap(({ name, notReady }) => {
      const reason = askReadiness(notReady);
      return reason === undefined ? [] : [{ component: name, reason }];
    });
    return notReady.length === 0 ? { ready: true } : { ready: false, notReady };
  }

  /** Why the process is not ready (the components' reasons), or undefined when it is. */
  notReady(): string | undefined {
    const readiness = this.readiness();
    return readiness.ready ? undefined : readiness.notReady.map((n) => n.reason).join('; ');
  }

  #enqueue<T>(
    name: string,
    notReady: (() => string | undefined) | undefined,
    start: () => Promise<Started<T>>,
  ): Promise<T> {
    if (this.#stopping !== undefined) return Promise.reject(notStarted(name));
    const started = this.#queue.then(() => this.#start(name, notReady, start));
    this.#queue = started.catch(() => undefined);
    return started;
  }

  async #start<T>(
    name: string,
    notReady: (() => string | undefined) | undefined,
    start: () => Promise<Started<T>>,
  ): Promise<T> {
    if (this.#failed) throw notStarted(name);
    this.#starting = { name, notReady };
    try {
      const started = await start();
      this.#started.push({ name, stop: started.stop, notReady: started.notReady ?? notReady });
      return started.value;
    } catch (error) {
      this.#failed = true;
      const stopped = this.#stopAll();
      this.#stopping = stopped.then(() => undefined);
      throw new ComponentStartError(name, error, await stopped);
    } finally {
      this.#starting = undefined;
    }
  }

  async #stopAll(): Promise<ComponentFailure[]> {
    const failures: ComponentFailure[] = [];
    for (let last = this.#started.pop(); last !== undefined; last = this.#started.pop()) {
      try {
        await last.stop();
      } catch (error) {
        failures.push({ component: last.name, error });
      }
    }
    return failures;
  }
}

/** A start asked for when the process is stopping, or after another start failed. */
function notStarted(name: string): ComponentStartError {
  const stopping = new HapticError(
    errorCodes.COMPONENT_START_FAILED,
    `The ${name} was not started: the process is stopping.`,
  );
  return new ComponentStartError(name, stopping, []);
}

/** A readiness check's answer; one that throws is an answer too (not ready, and why). */
function askReadiness(notReady: (() => string | undefined) | undefined): string | undefined {
  try {
    return notReady?.();
  } catch (error) {
    return `its readiness check failed: ${describeError(error)}`;
  }
}
