/**
 * How the controller talks to agents, from its flags and environment (as the chart sets
 * them): mutual TLS by default, with the controller identity from `--tls-dir` and the agents'
 * DNS name from AGENT_TLS_SERVER_NAME; legacy HTTP Basic authentication only when
 * `--legacy-basic-auth` is given, with DATAPLANE_USERNAME / DATAPLANE_PASSWORD. Mixing the
 * two is refused, so TLS mode can never end up sending credentials over plain HTTP.
 */
import type { Logger } from 'pino';
import { TlsMaterialWatcher } from '../../tls/material-watcher.ts';
import { AgentClient } from './agent-client.ts';

export interface AgentTransportSettings {
  /** `--legacy-basic-auth`. */
  readonly legacyBasicAuth: boolean;
  /** `--tls-dir`, when given on the command line. @default /etc/haptic/agent-tls */
  readonly tlsDir?: string;
  readonly environment: Readonly<Record<string, string | undefined>>;
}

export type AgentTransportChoice =
  | { readonly mode: 'mtls'; readonly tlsDir: string; readonly serverName: string }
  | { readonly mode: 'legacy-basic-auth'; readonly username: string; readonly password: string };

const dnsName = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Decides the transport; a sentence naming the flag or variable to fix when it cannot. */
export function chooseAgentTransport(
  settings: AgentTransportSettings,
): AgentTransportChoice | string {
  const { environment: env } = settings;
  const serverName = env.AGENT_TLS_SERVER_NAME ?? '';
  const username = env.DATAPLANE_USERNAME ?? '';
  const password = env.DATAPLANE_PASSWORD ?? '';
  if (settings.legacyBasicAuth) {
    if (settings.tlsDir !== undefined || serverName !== '') {
      return '--legacy-basic-auth excludes --tls-dir and AGENT_TLS_SERVER_NAME; choose one mode (haproxy.agent.tls.enabled).';
    }
    if (username === '' || password === '') {
      return '--legacy-basic-auth needs DATAPLANE_USERNAME and DATAPLANE_PASSWORD (credentials.existingSecret).';
    }
    return { mode: 'legacy-basic-auth', username, password };
  }
  if (username !== '' || password !== '') {
    return 'DATAPLANE_USERNAME and DATAPLANE_PASSWORD are only used with --legacy-basic-auth; mutual TLS never sends them.';
  }
  if (serverName.length > 253 || !dnsName.test(serverName.toLowerCase())) {
    return `AGENT_TLS_SERVER_NAME must be the DNS SAN of the agent certificate, such as haptic-agent, not "${serverName}".`;
  }
  return { mode: 'mtls', tlsDir: settings.tlsDir ?? '/etc/haptic/agent-tls', serverName };
}

export interface OpenAgentClient {
  readonly client: AgentClient;
  /** The mounted controller identity, in mTLS mode (for state and metrics). */
  readonly material: TlsMaterialWatcher | undefined;
  close(): void;
}

/** Starts the client (and, in mTLS mode, the watcher of the mounted identity). */
export async function openAgentClient(
  choice: AgentTransportChoice,
  logger: Logger,
): Promise<OpenAgentClient> {
  if (choice.mode === 'legacy-basic-auth') {
    logger.warn('legacy mode: agents are called over plain HTTP with Basic authentication');
    const client = new AgentClient(choice);
    return {
      client,
      material: undefined,
      close: () => {
        client.close();
      },
    };
  }
  const material = await TlsMaterialWatcher.start({ dir: choice.tlsDir, logger });
  const client = new AgentClient({ mode: 'mtls', material, serverName: choice.serverName });
  return {
    client,
    material,
    close: () => {
      client.close();
      material.close();
    },
  };
}
