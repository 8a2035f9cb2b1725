import { Watch, type KubeConfig } from '@kubernetes/client-node';

export interface WatchLoopOptions<T> {
  /** API path to watch, e.g. `/apis/batch/v1/jobs`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Reads the current state (handling it as it likes) and returns the resourceVersion to watch from. */
  readonly relist: () => Promise<string | undefined>;
  readonly onEvent: (phase: string, object: T) => void;
  /** Told when a relist fails; the loop retries. */
  readonly onError?: (error: unknown) => void;
}

export interface WatchLoop {
  stop(): Promise<void>;
}

/** List-then-watch, relisting whenever the watch ends, until stopped. */
export function startWatchLoop<T>(kc: KubeConfig, options: WatchLoopOptions<T>): WatchLoop {
  const stopping = new AbortController();
  let current: AbortController | undefined;

  const watchOnce = (resourceVersion: string | undefined): Promise<void> =>
    new Promise((resolve) => {
      const query = { ...options.query, allowWatchBookmarks: true, resourceVersion };
      new Watch(kc)
        .watch(options.path, query, options.onEvent, () => {
          resolve();
        })
        .then(
          (controller) => {
            current = controller;
            if (stopping.signal.aborted) controller.abort();
          },
          () => {
            resolve();
          },
        );
    });

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await watchOnce(await options.relist());
      } catch (error) {
        options.onError?.(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();

  return {
    async stop() {
      stopping.abort();
      current?.abort();
      await loop;
    },
  };
}
