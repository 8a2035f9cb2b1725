import { describe, expect, it } from 'vitest';
import { HapticError, errorCodes } from '../errors.ts';
import { type Component, ComponentStartError, ComponentStopError, Lifecycle } from './lifecycle.ts';

/** A component that records its start and stop in `log`, and fails where told. */
function recorded(
  name: string,
  log: string[],
  fail: { start?: Error; stop?: Error } = {},
): Component {
  return {
    name,
    start: async () => {
      await Promise.resolve();
      log.push(`start ${name}`);
      if (fail.start !== undefined) throw fail.start;
    },
    stop: () => {
      log.push(`stop ${name}`);
      if (fail.stop !== undefined) throw fail.stop;
    },
  };
}

describe('Lifecycle', () => {
  it('starts components in order and stops them in reverse order', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    for (const name of ['a', 'b', 'c']) await lifecycle.start(recorded(name, log));
    await lifecycle.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('keeps the order of starts asked for without waiting for each', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    await Promise.all(['a', 'b', 'c'].map((name) => lifecycle.start(recorded(name, log))));
    expect(log).toEqual(['start a', 'start b', 'start c']);
  });

  it('stops the started components when one fails to start, and names the one that failed', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(recorded('a', log));
    await lifecycle.start(recorded('b', log));
    const cause = new HapticError(errorCodes.TLS_MATERIAL_INVALID, 'tls.crt is missing.');
    const failed = lifecycle.start(recorded('c', log, { start: cause }));
    await expect(failed).rejects.toBeInstanceOf(ComponentStartError);
    await expect(failed).rejects.toMatchObject({
      component: 'c',
      cause,
      code: errorCodes.TLS_MATERIAL_INVALID,
      message: 'tls.crt is missing.',
      stopFailures: [],
    });
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
  });

  it('gives a start failure without a code of its own COMPONENT_START_FAILED', async () => {
    const lifecycle = new Lifecycle();
    await expect(
      lifecycle.start(recorded('webhook', [], { start: new Error('EADDRINUSE') })),
    ).rejects.toMatchObject({
      component: 'webhook',
      code: errorCodes.COMPONENT_START_FAILED,
      message: 'EADDRINUSE',
    });
  });

  it('reports the stops that threw while a failed start stopped the others', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    const stuck = new Error('still busy');
    await lifecycle.start(recorded('a', log));
    await lifecycle.start(recorded('b', log, { stop: stuck }));
    await expect(
      lifecycle.start(recorded('c', log, { start: new Error('no') })),
    ).rejects.toMatchObject({ component: 'c', stopFailures: [{ component: 'b', error: stuck }] });
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
  });

  it('starts nothing once a start failed or a stop was asked for', async () => {
    const log: string[] = [];
    const failedFirst = new Lifecycle();
    await failedFirst.start(recorded('a', log, { start: new Error('no') })).catch(() => undefined);
    await expect(failedFirst.start(recorded('b', log))).rejects.toMatchObject({
      component: 'b',
      message: 'The b was not started: the process is stopping.',
    });
    const stopped = new Lifecycle();
    await stopped.stop();
    await expect(stopped.start(recorded('c', log))).rejects.toBeInstanceOf(ComponentStartError);
    expect(log).toEqual(['start a']);
  });

  it('runs every stop even when some throw, then names those that threw', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(recorded('a', log, { stop: new Error('a is stuck') }));
    await lifecycle.start(recorded('b', log));
    await lifecycle.start(recorded('c', log, { stop: new Error('c is stuck') }));
    const stopping = lifecycle.stop();
    await expect(stopping).rejects.toBeInstanceOf(ComponentStopError);
    await expect(stopping).rejects.toMatchObject({
      code: errorCodes.COMPONENT_STOP_FAILED,
      message: 'Components failed to stop: c (c is stuck); a (a is stuck).',
      failures: [{ component: 'c' }, { component: 'a' }],
    });
    expect(log.filter((line) => line.startsWith('stop'))).toEqual(['stop c', 'stop b', 'stop a']);
  });

  it('stops once, however often it is asked', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    await lifecycle.start(recorded('a', log));
    await Promise.all([lifecycle.stop(), lifecycle.stop()]);
    await lifecycle.stop();
    expect(log).toEqual(['start a', 'stop a']);
  });

  it('waits for a start under way before it stops, and stops that component too', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    const starting = lifecycle.start(recorded('a', log));
    await lifecycle.stop();
    await starting;
    expect(log).toEqual(['start a', 'stop a']);
  });

  it('opens what a component makes, hands it back, asks it for readiness and closes it at stop', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    const server = await lifecycle.open('server', () => ({ port: 8080, listening: false }), {
      close: (opened) => {
        log.push(`close ${opened.port}`);
      },
      notReady: (opened) => (opened.listening ? undefined : `not listening on ${opened.port}`),
    });
    expect(server).toEqual({ port: 8080, listening: false });
    await lifecycle.open('without hooks', () => 'made');
    expect(lifecycle.notReady()).toBe('not listening on 8080');
    server.listening = true;
    expect(lifecycle.readiness()).toEqual({ ready: true });
    await lifecycle.stop();
    expect(log).toEqual(['close 8080']);
  });

  it('does not close what failed to open', async () => {
    const log: string[] = [];
    const lifecycle = new Lifecycle();
    await expect(
      lifecycle.open(
        'server',
        () => {
          throw new Error('cannot listen');
        },
        {
          close: () => {
            log.push('closed');
          },
        },
      ),
    ).rejects.toMatchObject({ component: 'server', message: 'cannot listen' });
    expect(log).toEqual([]);
  });
});

describe('Lifecycle readiness', () => {
  it('is ready when every started component is, and says which are not and why', async () => {
    let synced = false;
    const lifecycle = new Lifecycle();
    await lifecycle.start({ name: 'ops servers' });
    expect(lifecycle.readiness()).toEqual({ ready: true });
    await lifecycle.start({
      name: 'informers',
      notReady: () => (synced ? undefined : 'the informers have not synced yet'),
    });
    await lifecycle.start({ name: 'cache', notReady: () => 'the cache is cold' });
    expect(lifecycle.readiness()).toEqual({
      ready: false,
      notReady: [
        { component: 'informers', reason: 'the informers have not synced yet' },
        { component: 'cache', reason: 'the cache is cold' },
      ],
    });
    expect(lifecycle.notReady()).toBe('the informers have not synced yet; the cache is cold');
    synced = true;
    expect(lifecycle.notReady()).toBe('the cache is cold');
  });

  it('counts a component from the moment its start begins until it stops', async () => {
    const lifecycle = new Lifecycle();
    let finish = (): void => undefined;
    const starting = lifecycle.start({
      name: 'informers',
      start: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
      notReady: () => 'the informers have not synced yet',
    });
    await Promise.resolve();
    expect(lifecycle.notReady()).toBe('the informers have not synced yet');
    finish();
    await starting;
    expect(lifecycle.notReady()).toBe('the informers have not synced yet');
    await lifecycle.stop();
    expect(lifecycle.readiness()).toEqual({ ready: true });
  });

  it('reads a readiness check that throws as not ready', async () => {
    const lifecycle = new Lifecycle();
    await lifecycle.start({
      name: 'broken',
      notReady: () => {
        throw new Error('no state');
      },
    });
    expect(lifecycle.readiness()).toEqual({
      ready: false,
      notReady: [{ component: 'broken', reason: 'its readiness check failed: no state' }],
    });
  });
});
