import { describe, expect, it } from 'vitest';
import { pruneTlsState, recordedPods } from './tls-state-pruning.ts';

const config = (tls: unknown) => ({
  apiVersion: 'haproxy-haptic.org/v1alpha1',
  kind: 'HAProxyTemplateConfig',
  status: { tls },
});

describe('pruning the TLS state of gone Pods', () => {
  it('removes entries of Pods that no longer exist, asking only for unknown ones', async () => {
    const asked: string[] = [];
    const removed: string[] = [];
    await pruneTlsState({
      config: config({
        'controller-a': {},
        'controller-gone': {},
        'haproxy-a': {},
        'controller-b': {},
      }),
      known: new Set(['controller-a', 'haproxy-a']),
      podExists: (pod) => {
        asked.push(pod);
        return Promise.resolve(pod === 'controller-b');
      },
      sink: { put: (pod, entry) => entry === null && removed.push(pod) },
    });
    expect(asked).toEqual(['controller-gone', 'controller-b']);
    expect(removed).toEqual(['controller-gone']);
  });

  it('finds no entries in a config without status.tls or with a malformed one', () => {
    expect(recordedPods(undefined)).toEqual([]);
    expect(recordedPods(config(['controller-a']))).toEqual([]);
    expect(recordedPods(config('x'))).toEqual([]);
  });
});
