/** Where a server listens, as `--listen`-style flags give it (agent, controller, webhook). */
export interface ListenAddress {
  /** undefined: every address. */
  readonly host: string | undefined;
  readonly port: number;
}

/** Parses `:5555`, `0.0.0.0:5555`, `127.0.0.2:5555` or `[::1]:5555`; a sentence if invalid. */
export function parseListenAddress(text: string): ListenAddress | string {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port < 1 || port > 65_535) {
    return `"${text}" is not an address such as :5555, 0.0.0.0:5555 or [::1]:5555.`;
  }
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port };
}
