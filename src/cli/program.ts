/**
 * The `haptic` command line (commander wiring only), loaded by `main.ts` once the Node version
 * is known to fit.
 */
import { Command } from 'commander';
import { describeError } from '../errors.ts';
import { readPackageVersion } from '../version.ts';
import { registerAgentCommand } from './agent-command.ts';
import { registerCertificatesCommand } from './certificates-command.ts';
import { registerConfigCommand } from './config-command.ts';
import { registerCrdsCommand } from './crds-command.ts';
import { registerPreflightCommand } from './preflight-command.ts';
import { registerRunCommand } from './run-command.ts';
import { registerSandboxCommand } from './sandbox-command.ts';
import { registerWebhookCommand } from './webhook-command.ts';

const program = new Command('haptic')
  .description('HAProxy Template Ingress Controller: controller, agent, validator and certificates')
  .showHelpAfterError()
  .exitOverride((err) => {
    // commander's own usage errors exit 2, like every other usage error of ours.
    process.exit(err.exitCode === 0 ? 0 : 2);
  });

program
  .command('version')
  .description('print the binary version (equal to the embedded chart version)')
  .action(() => {
    process.stdout.write(`${readPackageVersion()}\n`);
  });

registerAgentCommand(program);
registerCertificatesCommand(program);
registerConfigCommand(program);
registerCrdsCommand(program);
registerPreflightCommand(program);
registerRunCommand(program);
registerSandboxCommand(program);
registerWebhookCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.stderr.write(`haptic: ${describeError(error)}\n`);
  process.exitCode = 2;
}
