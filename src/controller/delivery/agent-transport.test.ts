import { describe, expect, it } from 'vitest';
import { chooseAgentTransport } from './agent-transport.ts';

describe("choosing the controller's agent transport", () => {
  it('uses mutual TLS by default, with the agent name from AGENT_TLS_SERVER_NAME', () => {
    expect(
      chooseAgentTransport({
        legacyBasicAuth: false,
        environment: { AGENT_TLS_SERVER_NAME: 'haptic-agent' },
      }),
    ).toEqual({ mode: 'mtls', tlsDir: '/etc/haptic/agent-tls', serverName: 'haptic-agent' });
  });

  it('uses Basic authentication only when --legacy-basic-auth is given', () => {
    expect(
      chooseAgentTransport({
        legacyBasicAuth: true,
        environment: { DATAPLANE_USERNAME: 'admin', DATAPLANE_PASSWORD: 'secret' },
      }),
    ).toEqual({ mode: 'legacy-basic-auth', username: 'admin', password: 'secret' });
  });

  it.each([
    [
      'mTLS without AGENT_TLS_SERVER_NAME',
      { legacyBasicAuth: false, environment: {} },
      /AGENT_TLS_SERVER_NAME/,
    ],
    [
      'a server name that is not a DNS name',
      { legacyBasicAuth: false, environment: { AGENT_TLS_SERVER_NAME: 'a b' } },
      /DNS SAN/,
    ],
    [
      'Basic credentials in mTLS mode',
      {
        legacyBasicAuth: false,
        environment: { AGENT_TLS_SERVER_NAME: 'haptic-agent', DATAPLANE_PASSWORD: 'x' },
      },
      /only used with --legacy-basic-auth/,
    ],
    [
      'legacy mode without credentials',
      { legacyBasicAuth: true, environment: { DATAPLANE_USERNAME: 'admin' } },
      /DATAPLANE_PASSWORD/,
    ],
    [
      'legacy mode with a TLS directory',
      {
        legacyBasicAuth: true,
        tlsDir: '/tls',
        environment: { DATAPLANE_USERNAME: 'a', DATAPLANE_PASSWORD: 'b' },
      },
      /choose one mode/,
    ],
  ])('refuses %s', (_name, settings, message) => {
    expect(chooseAgentTransport(settings)).toMatch(message);
  });
});
