/**
 * `haptic agent` as a process: JSON logs on stdout, the agent until SIGTERM or SIGINT, then
 * a graceful stop (in-flight requests finish within the grace period). Returns the exit code:
 * 0 after a requested stop, 1 when the agent cannot start.
 */
import { describeError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { stopOnSignal } from '../stop-on-signal.ts';
import { readPackageVersion } from '../version.ts';
import type { AgentOptions } from './agent-options.ts';
import { startAgent } from './agent-server.ts';

export async function runAgentProcess(options: AgentOptions, logLevel: string): Promise<number> {
  const logger = createLogger({ component: 'agent', level: logLevel });
  logger.info({ version: readPackageVersion() }, 'agent starting');
  let agent;
  try {
    agent = await startAgent(options, logger);
  } catch (error) {
    logger.fatal({ err: describeError(error) }, 'agent cannot start');
    process.stderr.write(`haptic agent: ${describeError(error)}\n`);
    return 1;
  }
  const running = agent;
  await stopOnSignal(logger, 'agent', () => running.close());
  return 0;
}
