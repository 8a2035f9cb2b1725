import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { endpointsFromPods } from './agent-discovery.ts';

describe('agent discovery', () => {
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
