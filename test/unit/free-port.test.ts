import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../dev/lib/free-port.ts';

describe('freePorts', () => {
  it('gives distinct ports, each of which can be bound right after', async () => {
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      await new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.close(() => {
            resolve();
          });
        });
      });
    }
  });
});
