import { describe, expect, it } from 'vitest';
import {
  clipMessage,
  readyConditionBody,
  readyReasons,
  readyStampOf,
  type ReadyCondition,
} from './ready-condition.ts';

const delivered: ReadyCondition = {
  ready: true,
  reason: readyReasons.Delivered,
  message: 'The configuration sha256:aaaa passed haproxy -c and runs on the agents.',
  observedGeneration: 3,
};
const failed: ReadyCondition = {
  ready: false,
  reason: readyReasons.CheckFailed,
  message: 'haproxy -c rejects line 4.',
  observedGeneration: 4,
};
const earlier = new Date('2026-12-05T10:00:00.250Z');
const later = new Date('2026-12-05T11:30:00.750Z');

describe('readyConditionBody', () => {
  it('stamps the first condition now, in whole seconds', () => {
    expect(readyConditionBody(delivered, undefined, earlier)).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Delivered',
      message: delivered.message,
      lastTransitionTime: '2026-12-05T10:00:00Z',
      observedGeneration: 3,
    });
  });

  it('keeps the transition time while the status stays, whatever the reason or message', () => {
    const first = readyConditionBody(failed, undefined, earlier);
    const next = readyConditionBody(
      { ...failed, reason: readyReasons.RenderFailed, message: 'other', observedGeneration: 5 },
      first,
      later,
    );
    expect(next).toMatchObject({
      status: 'False',
      reason: 'RenderFailed',
      lastTransitionTime: '2026-12-05T10:00:00Z',
      observedGeneration: 5,
    });
  });

  it('moves the transition time when the status flips', () => {
    const first = readyConditionBody(failed, undefined, earlier);
    expect(readyConditionBody(delivered, first, later).lastTransitionTime).toBe(
      '2026-12-05T11:30:00Z',
    );
  });

  it('clips a long message to 1,000 characters, marking the cut', () => {
    const body = readyConditionBody({ ...failed, message: 'x'.repeat(5000) }, undefined, earlier);
    expect(body.message).toHaveLength(1000);
    expect(body.message.endsWith('…')).toBe(true);
    expect(clipMessage('short')).toBe('short');
  });
});

describe('readyStampOf', () => {
  it('reads the Ready condition of a status read from the API', () => {
    expect(
      readyStampOf({
        conditions: [
          { type: 'Other', status: 'False', lastTransitionTime: 'x' },
          { type: 'Ready', status: 'True', lastTransitionTime: '2026-12-05T10:00:00Z' },
        ],
      }),
    ).toEqual({ status: 'True', lastTransitionTime: '2026-12-05T10:00:00Z' });
  });

  it.each([
    ['no status', undefined],
    ['conditions not a list', { conditions: 'Ready' }],
    ['no Ready condition', { conditions: [{ type: 'Other', status: 'True' }] }],
    [
      'an unknown status',
      { conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: 't' }] },
    ],
    ['no transition time', { conditions: [{ type: 'Ready', status: 'True' }] }],
    ['a condition that is no object', { conditions: [null, 7] }],
  ])('finds no previous condition in %s', (_, status) => {
    expect(readyStampOf(status)).toBeUndefined();
  });
});
