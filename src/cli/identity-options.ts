/**
 * The agent-identity flags shared by `haptic run` and `haptic webhook`: which Secrets and peer
 * names the admission webhook guards, when they differ from what the release's values give.
 */
import { type Command, Option } from 'commander';
import type { IdentityOverrides } from '../webhook/index.ts';

export interface IdentityFlags {
  readonly provider?: 'default' | 'cert-manager' | 'external';
  readonly issuerSecret?: string;
  readonly serverSecret?: string;
  readonly clientSecret?: string;
  readonly serverName?: string;
  readonly clientName?: string;
}

export function addIdentityOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--provider <provider>',
        "agent TLS provider (default: from the release's values)",
      ).choices(['default', 'cert-manager', 'external']),
    )
    .option('--issuer-secret <name>', "issuer Secret (default: from the release's values)")
    .option('--server-secret <name>', "agent identity Secret (default: from the release's values)")
    .option(
      '--client-secret <name>',
      "controller identity Secret (default: from the release's values)",
    )
    .option(
      '--server-name <dns>',
      "DNS SAN of the agent certificate (default: from the release's values)",
    )
    .option(
      '--client-name <dns>',
      "DNS SAN of the controller certificate (default: from the release's values)",
    );
}

/** The flags that were given, as overrides of the derived identities. */
export function identityOverrides(flags: IdentityFlags): IdentityOverrides {
  return {
    ...(flags.provider === undefined ? {} : { provider: flags.provider }),
    ...(flags.issuerSecret === undefined ? {} : { issuerSecret: flags.issuerSecret }),
    ...(flags.serverSecret === undefined ? {} : { serverSecret: flags.serverSecret }),
    ...(flags.clientSecret === undefined ? {} : { clientSecret: flags.clientSecret }),
    ...(flags.serverName === undefined ? {} : { serverName: flags.serverName }),
    ...(flags.clientName === undefined ? {} : { clientName: flags.clientName }),
  };
}
