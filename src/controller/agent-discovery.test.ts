import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { endpointsFromPods } from './agent-discovery.ts';
import { parseAgentEndpoints } from './agent-endpoints.ts';

describe('agent discovery', () => {
  it('parses --agent-endpoints, named or not, sorted by name', () => {
    expect(parseAgentEndpoints('b=127.0.0.3:5555, a=127.0.0.2:5555,[::1]:6000')).toEqual([
      { name: '::1:6000', host: '::1', port: 6000 },
      { name: 'a', host: '127.0.0.2', port: 5555 },
      { name: 'b', host: '127.0.0.3', port: 5555 },
    ]);
    expect(parseAgentEndpoints('127.0.0.2')).toMatch(/is not an agent endpoint/);
    expect(parseAgentEndpoints('')).toBe('name at least one agent endpoint.');
  });

  it('takes running Pods with an IP that are not being deleted', () => {
    const pod = (name: string, phase: string, podIP?: string, deleting = false): V1Pod => ({
      metadata: { name, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
      status: { phase, ...(podIP === undefined ? {} : { podIP }) },
    });
    expect(
      endpointsFromPods(
        [
          pod('c', 'Running', '10.0.0.3'),
          pod('a', 'Running', '10.0.0.1'),
          pod('b', 'Pending', '10.0.0.2'),
          pod('d', 'Running'),
          pod('e', 'Running', '10.0.0.5', true),
        ],
        5555,
      ),
    ).toEqual([
      { name: 'a', host: '10.0.0.1', port: 5555 },
      { name: 'c', host: '10.0.0.3', port: 5555 },
    ]);
  });
});
