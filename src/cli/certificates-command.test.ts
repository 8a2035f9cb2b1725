import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerCertificatesCommand } from './certificates-command.ts';

/** Parses `haptic certificates renew` arguments; the flags it would run with, or commander's error. */
function parseRenew(args: readonly string[]): Record<string, unknown> | CommanderError {
  const program = new Command().exitOverride();
  registerCertificatesCommand(program);
  let flags: Record<string, unknown> = {};
  const renew = program.commands
    .find((command) => command.name() === 'certificates')
    ?.commands.find((command) => command.name() === 'renew');
  if (renew === undefined) throw new Error('haptic certificates renew is not registered');
  renew
    .exitOverride()
    .configureOutput({ writeErr: () => undefined })
    .action((parsed: Record<string, unknown>) => {
      flags = parsed;
    });
  try {
    program.parse(['certificates', 'renew', ...args], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error;
    throw error;
  }
  return flags;
}

describe('haptic certificates renew --convergence-timeout', () => {
  it('leaves the wait to the renewal default (two minutes) when absent', () => {
    expect(parseRenew([])).not.toHaveProperty('convergenceTimeout');
  });

  it.each([
    ['30s', 30_000],
    ['2m', 120_000],
    ['1m30s', 90_000],
    ['0s', 0],
    ['0', 0],
  ])('reads %j as %d ms', (value, ms) => {
    expect(parseRenew(['--convergence-timeout', value])).toMatchObject({ convergenceTimeout: ms });
  });

  it.each(['2', 'two minutes', '-1m', '1.5m', ''])(
    'refuses %j, naming the flag and the values it takes',
    (value) => {
      const result = parseRenew([`--convergence-timeout=${value}`]);
      expect(result).toBeInstanceOf(CommanderError);
      expect(result instanceof CommanderError ? result.message : '').toContain(
        `option '--convergence-timeout <duration>' argument '${value}' is invalid. must be a duration such as 30s or 2m, or 0 to not wait.`,
      );
    },
  );
});
