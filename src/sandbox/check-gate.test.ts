import { describe, expect, it } from 'vitest';
import { CheckGate } from './check-gate.ts';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe('CheckGate', () => {
  it('runs at most `concurrent` tasks, queues `waiting` more in order, and refuses the rest', async () => {
    const gate = new CheckGate(1, 1);
    const first = deferred();
    const order: string[] = [];
    const running = gate.run(async () => {
      order.push('first');
      await first.promise;
      return 'first';
    });
    const queued = gate.run(() => {
      order.push('second');
      return Promise.resolve('second');
    });
    const refused = await gate.run(() => Promise.resolve('third'));
    expect(refused).toBeUndefined();
    expect(gate.load()).toEqual({ running: 1, waiting: 1 });
    first.resolve();
    expect(await Promise.all([running, queued])).toEqual(['first', 'second']);
    expect(order).toEqual(['first', 'second']);
    expect(gate.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when a task throws', async () => {
    const gate = new CheckGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
  });
});
