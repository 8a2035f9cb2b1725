import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FqdnResolver } from './fqdn-resolver.ts';

// Only names the resolver answers without asking a DNS server: an IPv4 literal (which the API
// accepts in FQDN slices) and localhost from /etc/hosts.
describe('FqdnResolver', () => {
  it('answers from what it knows, resolves new names in the background, and calls onChange once per new answer', async () => {
    let changes = 0;
    let changed: () => void = () => undefined;
    const resolver = new FqdnResolver({
      logger: pino({ level: 'silent' }),
      concurrency: 1,
      onChange: () => {
        changes += 1;
        changed();
      },
    });
    try {
      const names = ['127.0.0.11', 'localhost'];
      expect(resolver.resolutions(names).size).toBe(0);
      await new Promise<void>((resolve) => {
        changed = () => {
          if (changes === 2) resolve();
        };
      });
      const known = resolver.resolutions(names);
      expect(known.get('127.0.0.11')).toEqual({ addresses: ['127.0.0.11'] });
      const local = known.get('localhost');
      expect(local !== undefined && 'addresses' in local ? local.addresses : []).toContain(
        '127.0.0.1',
      );
      // Asking again within the refresh period starts no lookup and changes nothing.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(changes).toBe(2);
    } finally {
      resolver.stop();
    }
  });
});
