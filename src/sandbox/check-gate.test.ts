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
    expect(gate.load()).toMatchObject({ running: 1, waiting: 1 });
    first.resolve();
    expect(await Promise.all([running, queued])).toEqual(['first', 'second']);
    expect(order).toEqual(['first', 'second']);
    expect(gate.load()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('frees the slot when a task throws', async () => {
    const gate = new CheckGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
  });
});

describe('CheckGate lanes', () => {
  /** A task that runs until `release()`, noting its name when it starts. */
  function held(order: string[], name: string) {
    const done = deferred();
    return {
      task: async () => {
        order.push(name);
        await done.promise;
        return name;
      },
      release: done.resolve,
    };
  }

  it('keeps a slot for delivery that reviews cannot fill, and starts delivery before waiting reviews', async () => {
    const gate = new CheckGate(2, 16);
    const order: string[] = [];
    const reviews = Array.from({ length: 18 }, (_, index) =>
      held(order, `review ${String(index)}`),
    );
    const running = reviews.map((review) => gate.run(review.task, { lane: 'review' }));
    // One review runs, 16 wait, the 18th is refused; the second slot stays free.
    expect(await running[17]).toBeUndefined();
    expect(gate.load()).toEqual({ running: 1, waiting: 16, reviews: { running: 1, waiting: 16 } });
    const delivery = held(order, 'delivery');
    const delivered = gate.run(delivery.task);
    await Promise.resolve();
    expect(order).toEqual(['review 0', 'delivery']);
    // A second delivery waits for a slot, and takes it before every waiting review.
    const next = held(order, 'next delivery');
    const nextDelivered = gate.run(next.task, { lane: 'delivery' });
    reviews[0]?.release();
    delivery.release();
    next.release();
    expect(await delivered).toBe('delivery');
    expect(await nextDelivered).toBe('next delivery');
    expect(order.slice(0, 3)).toEqual(['review 0', 'delivery', 'next delivery']);
    for (const review of reviews) review.release();
    await Promise.all(running);
    expect(gate.load()).toEqual({ running: 0, waiting: 0, reviews: { running: 0, waiting: 0 } });
  });

  it('with one slot, lets a review run and delivery wait for that one only', async () => {
    const gate = new CheckGate(1, 4);
    const order: string[] = [];
    const first = held(order, 'review 1');
    const second = held(order, 'review 2');
    const delivery = held(order, 'delivery');
    const runs = [
      gate.run(first.task, { lane: 'review' }),
      gate.run(second.task, { lane: 'review' }),
      gate.run(delivery.task),
    ];
    first.release();
    delivery.release();
    second.release();
    await Promise.all(runs);
    expect(order).toEqual(['review 1', 'delivery', 'review 2']);
  });

  it('drops a waiting task whose caller is gone, without running it', async () => {
    const gate = new CheckGate(1, 4);
    const order: string[] = [];
    const first = held(order, 'first');
    const running = gate.run(first.task);
    const gone = new AbortController();
    const waiting = gate.run(() => Promise.resolve('never'), { signal: gone.signal });
    expect(gate.load().waiting).toBe(1);
    gone.abort();
    expect(await waiting).toBeUndefined();
    expect(gate.load().waiting).toBe(0);
    first.release();
    expect(await running).toBe('first');
    expect(await gate.run(() => Promise.resolve('after'), { signal: gone.signal })).toBeUndefined();
  });
});
