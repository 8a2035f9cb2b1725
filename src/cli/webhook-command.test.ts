import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerAgentCommand } from './agent-command.ts';
import { registerRunCommand } from './run-command.ts';
import { registerWebhookCommand } from './webhook-command.ts';

/** The help text of one command, as `haptic <name> --help` prints it. */
function help(register: (program: Command) => void, name: string): string {
  const program = new Command('haptic');
  register(program);
  const command = program.commands.find((c) => c.name() === name);
  if (command === undefined) throw new Error(`no command ${name}`);
  return command.helpInformation();
}

describe('haptic webhook --help', () => {
  it('prints the --listen default as written on the command line', () => {
    expect(help(registerWebhookCommand, 'webhook')).toMatch(
      /--listen <\[host\]:port>\s+address to listen on \(default: :9443\)/,
    );
  });

  it.each([
    ['webhook', registerWebhookCommand],
    ['run', registerRunCommand],
    ['agent', registerAgentCommand],
  ] as const)('haptic %s --help prints no default as a JSON object', (name, register) => {
    expect(help(register, name)).not.toMatch(/\(default: \{/);
  });
});
