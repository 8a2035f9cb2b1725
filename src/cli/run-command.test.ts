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

describe('haptic run endpoint ranges', () => {
  it.each([
    [
      'takes the Pod CIDRs from the Nodes when no flag names them',
      [],
      { allowedEndpointCidrs: [] },
    ],
    [
      'reads Pod CIDRs of both families',
      ['--pod-cidrs=10.244.0.0/16,fd00:10:244::/56'],
      { podCidrs: ['10.244.0.0/16', 'fd00:10:244::/56'] },
    ],
    [
      'reads further allowed CIDRs',
      ['--allowed-endpoint-cidrs=10.96.0.0/12,203.0.113.7/32'],
      { allowedEndpointCidrs: ['10.96.0.0/12', '203.0.113.7/32'] },
    ],
    [
      'reads an empty allowed list as none',
      ['--allowed-endpoint-cidrs='],
      { allowedEndpointCidrs: [] },
    ],
    [
      'reads the own Pods selector',
      ['--own-pod-selector=app.kubernetes.io/instance=haptic'],
      { ownPodSelector: 'app.kubernetes.io/instance=haptic' },
    ],
  ])('%s', (_, args, expected) => {
    const flags = parseRun(args);
    expect(flags).toMatchObject(expected);
    if (args.length === 0) expect(flags).not.toHaveProperty('podCidrs');
  });

  it.each([
    ['--pod-cidrs=', 'must name at least one CIDR.'],
    ['--pod-cidrs=10.244.0.0', '10.244.0.0 is not a CIDR: it needs a prefix length from 0 to 32'],
    ['--pod-cidrs=10.244.0.0/33', '10.244.0.0/33 is not a CIDR'],
    [
      '--allowed-endpoint-cidrs=fd00::/129',
      'fd00::/129 is not a CIDR: it needs a prefix length from 0 to 128',
    ],
    ['--allowed-endpoint-cidrs=10.96.0.0/12,', ' is not a CIDR:  is not an IP address'],
    [
      '--allowed-endpoint-cidrs=example.com/24',
      'example.com/24 is not a CIDR: example.com is not an IP address',
    ],
  ])('refuses %s, saying why', (arg, message) => {
    const result = parseRun([arg]);
    expect(result).toBeInstanceOf(CommanderError);
    expect(result).toMatchObject({
      code: 'commander.invalidArgument',
      message: expect.stringContaining(message) as unknown,
    });
  });
});

describe('haptic run budgets', () => {
  it('defaults to the model budgets, and reads each flag', () => {
    expect(parseRun([])).toMatchObject({
      serverSlotsPerNamespace: 8192,
      serverSlots: 49_152,
      certificateMibPerNamespace: 1,
      certificateMib: 4,
    });
    expect(
      parseRun([
        '--server-slots-per-namespace=100',
        '--server-slots=1000',
        '--certificate-mib-per-namespace=2',
        '--certificate-mib=8',
      ]),
    ).toMatchObject({
      serverSlotsPerNamespace: 100,
      serverSlots: 1000,
      certificateMibPerNamespace: 2,
      certificateMib: 8,
    });
  });

  it.each(['0', '-1', '1.5', 'many', '1e3'])('refuses %s with what to write', (value) => {
    const result = parseRun([`--server-slots=${value}`]);
    expect(result).toBeInstanceOf(CommanderError);
    expect(result instanceof CommanderError ? result.message : '').toBe(
      `error: option '--server-slots <n>' argument '${value}' is invalid. must be a whole number from 1 to 999999999, not "${value}".`,
    );
  });
});
