import { type Server, createServer } from 'node:net';

function listening(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address !== null && typeof address === 'object') resolve({ server, port: address.port });
      else reject(new Error('could not read the port the OS assigned'));
    });
  });
}

/**
 * `count` distinct TCP ports on 127.0.0.1 that were free a moment ago (the OS picks them).
 * All are held open until every one is chosen: ports taken one after another can repeat, as
 * the OS may hand out a port again right after it was closed.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const { server, port } = await listening();
      held.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(
      held.map(
        (server) =>
          new Promise<void>((resolve) =>
            server.close(() => {
              resolve();
            }),
          ),
      ),
    );
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no port');
  return port;
}
