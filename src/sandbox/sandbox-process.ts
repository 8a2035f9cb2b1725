/**
 * `haptic sandbox serve` as a process: JSON logs on stdout, the sandbox until SIGTERM or
 * SIGINT. Returns the exit code: 0 after a requested stop, 1 when it cannot start.
 */
import { describeError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { stopOnSignal } from '../stop-on-signal.ts';
import { readPackageVersion } from '../version.ts';
import { type RunningSandbox, type SandboxOptions, startSandbox } from './sandbox-service.ts';

export async function runSandboxProcess(
  options: SandboxOptions,
  logLevel: string,
): Promise<number> {
  const logger = createLogger({ component: 'sandbox', level: logLevel });
  logger.info({ version: readPackageVersion() }, 'check sandbox starting');
  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox(options, logger);
  } catch (error) {
    logger.fatal({ err: describeError(error) }, 'check sandbox cannot start');
    process.stderr.write(`haptic sandbox serve: ${describeError(error)}\n`);
    return 1;
  }
  await stopOnSignal(logger, 'check sandbox', () => sandbox.close());
  return 0;
}
