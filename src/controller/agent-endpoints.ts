import type { AgentEndpoint } from './agent-client.ts';

/**
 * Parses `--agent-endpoints`: comma-separated `[name=]host:port`, for example
 * `haproxy-0=127.0.0.2:5555,haproxy-1=127.0.0.3:5555`. A sentence when it is invalid.
 */
export function parseAgentEndpoints(text: string): readonly AgentEndpoint[] | string {
  const endpoints: AgentEndpoint[] = [];
  for (const item of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^(?:([a-z0-9][-a-z0-9.]*)=)?(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(
      item,
    );
    const port = Number(match?.[3]);
    if (match === null || port < 1 || port > 65535) {
      return `"${item}" is not an agent endpoint such as haproxy-0=127.0.0.2:5555 or 127.0.0.2:5555.`;
    }
    const host = (match[2] ?? '').replace(/^\[(.*)\]$/, '$1');
    endpoints.push({ name: match[1] ?? `${host}:${port}`, host, port });
  }
  if (endpoints.length === 0) return 'name at least one agent endpoint.';
  return endpoints.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
