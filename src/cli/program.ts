/**
 * The `haptic` command line (commander wiring only), loaded by `main.ts` once the Node version
 * is known to fit.
 *
 * Each command's module is loaded only when it is needed: when the first argument names a
 * command, only that command is registered (and none for `haptic version` or `--version`), because a module's
 * own imports cost start-up time that the other commands, `haptic preflight` first, should not
 * pay; otherwise (no command, `help`, `--help`, an option, an unknown name) every command is, so
 * help lists them all and commander suggests the closest name exactly as before.
 */
import { Command, InvalidArgumentError } from 'commander';
import { describeError } from '../errors.ts';
import { readPackageVersion } from '../version.ts';
import {
  type CompletionShell,
  completionScript,
  completionShells,
  completionTree,
} from './completion.ts';

type Register = (program: Command) => void;

/** Every command but `version`, by name, in the order help lists them. */
const commands: Readonly<Record<string, () => Promise<Register>>> = {
  agent: async () => (await import('./agent-command.ts')).registerAgentCommand,
  certificates: async () => (await import('./certificates-command.ts')).registerCertificatesCommand,
  config: async () => (await import('./config-command.ts')).registerConfigCommand,
  crds: async () => (await import('./crds-command.ts')).registerCrdsCommand,
  ingress: async () => (await import('./ingress-lint.ts')).registerIngressCommand,
  preflight: async () => (await import('./preflight-command.ts')).registerPreflightCommand,
  run: async () => (await import('./run-command.ts')).registerRunCommand,
  sandbox: async () => (await import('./sandbox-command.ts')).registerSandboxCommand,
  webhook: async () => (await import('./webhook-command.ts')).registerWebhookCommand,
};

/** The loaders of the commands to register for these arguments (argv after node and script). */
function needed(args: readonly string[]): readonly (() => Promise<Register>)[] {
  const first = args[0] ?? '';
  if (first === 'version' || first === '--version' || first === '-V') return [];
  const named = Object.hasOwn(commands, first) ? commands[first] : undefined;
  return named === undefined ? Object.values(commands) : [named];
}

const program = new Command('haptic')
  .description('HAProxy Template Ingress Controller: controller, agent, validator and certificates')
  .version(readPackageVersion(), '-V, --version', 'print the binary version')
  .showHelpAfterError()
  .exitOverride((err) => {
    // commander's own usage errors exit 2, like every other usage error of ours.
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

program
  .command('version')
  .description(
    'print the binary version (equal to the embedded chart version), the HAProxy on PATH and Node.js',
  )
  .action(async () => {
    const { describeVersions } = await import('./version-command.ts');
    process.stdout.write(await describeVersions());
  });

program
  .command('completion')
  .description('print a shell completion script: source <(haptic completion bash)')
  .argument('<shell>', `the shell: ${completionShells.join(' or ')}`, (shell: string) => {
    if ((completionShells as readonly string[]).includes(shell)) return shell as CompletionShell;
    throw new InvalidArgumentError(`choose ${completionShells.join(' or ')}.`);
  })
  .action((shell: CompletionShell) => {
    process.stdout.write(completionScript(completionTree(program), shell));
  });

try {
  const registers = await Promise.all(needed(process.argv.slice(2)).map((load) => load()));
  for (const register of registers) register(program);
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`haptic: ${describeError(error)}\n`);
  process.exitCode = 2;
}
