import type { Logger } from './logger.ts';

/**
 * Resolves once SIGTERM or SIGINT has arrived and `close` has finished: the graceful stop of
 * a long-running process (agent, controller). Later signals are left to Node's default.
 */
export function stopOnSignal(
  logger: Logger,
  what: string,
  close: () => Promise<void>,
): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, `${what} stopping`);
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      void close().finally(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
