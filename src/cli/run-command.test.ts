import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerRunCommand } from './run-command.ts';

/** Parses `haptic run` arguments; the flags it would run with, or commander's error. */
function parseRun(args: readonly string[]): Record<string, unknown> | CommanderError {
  const program = new Command().exitOverride();
  registerRunCommand(program);
  let flags: Record<string, unknown> = {};
  for (const command of program.commands) {
    command
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .action((parsed: Record<string, unknown>) => {
        flags = parsed;
      });
  }
  try {
    program.parse(['run', ...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error;
    throw error;
  }
  return flags;
}

describe('haptic run --fqdn-endpoints', () => {
  it.each([
    ['serves FQDN endpoints by default', [], true],
    ['reads true', ['--fqdn-endpoints=true'], true],
    ['reads false', ['--fqdn-endpoints=false'], false],
    ['reads a separate value', ['--fqdn-endpoints', 'false'], false],
  ])('%s', (_, args, expected) => {
    expect(parseRun(args)).toMatchObject({ fqdnEndpoints: expected });
  });

  it.each(['yes', 'False', '0', ''])(
    'refuses %j, naming the flag and the values it takes',
    (value) => {
      const result = parseRun([`--fqdn-endpoints=${value}`]);
      expect(result).toBeInstanceOf(CommanderError);
      expect(result).toMatchObject({
        code: 'commander.invalidArgument',
        message: expect.stringContaining(
          `option '--fqdn-endpoints <true|false>' argument '${value}' is invalid. must be true or false, not "${value}".`,
        ) as unknown,
      });
    },
  );
});
