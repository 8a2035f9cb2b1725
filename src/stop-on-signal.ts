import type { Logger } from './logger.ts';

/**
 * Resolves once SIGTERM or SIGINT has arrived and `close` has finished: the graceful stop of
 * a long-running process (agent, controller). A repeated signal while stopping is logged and
 * ignored, so it cannot cut the stop short (a leader still releases its Lease); the kubelet's
 * SIGKILL after the grace period remains the hard stop.
 */
export function stopOnSignal(
  logger: Logger,
  what: string,
  close: () => Promise<void>,
): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.info({ signal }, `${what} already stopping`);
        return;
      }
      stopping = true;
      logger.info({ signal }, `${what} stopping`);
      void close().finally(() => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        resolve();
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
