/**
 * `haptic agent health` (the liveness and startup probe) and `haptic agent state`: they talk
 * to the local socket only, never to the management API, so expired or invalid certificates
 * never make the probe fail. Each returns the exit code: 0 answered, 1 not.
 */
import { describeError } from '../errors.ts';
import { agentPaths } from '../agent-api/api-types.ts';
import { getLocal } from './local-client.ts';

export async function runHealthCommand(socketPath: string, timeoutMs: number): Promise<number> {
  try {
    const answer = await getLocal(socketPath, agentPaths.health, timeoutMs);
    if (answer.status === 200) {
      process.stdout.write(`${answer.body}\n`);
      return 0;
    }
    process.stderr.write(
      `haptic agent health: the agent answered ${answer.status}: ${answer.body}\n`,
    );
  } catch (error) {
    process.stderr.write(`haptic agent health: ${describeError(error)}\n`);
  }
  return 1;
}

export async function runStateCommand(socketPath: string, timeoutMs: number): Promise<number> {
  try {
    const answer = await getLocal(socketPath, agentPaths.state, timeoutMs);
    if (answer.status === 200) {
      process.stdout.write(`${JSON.stringify(JSON.parse(answer.body), null, 2)}\n`);
      return 0;
    }
    process.stderr.write(
      `haptic agent state: the agent answered ${answer.status}: ${answer.body}\n`,
    );
  } catch (error) {
    process.stderr.write(`haptic agent state: ${describeError(error)}\n`);
  }
  return 1;
}
