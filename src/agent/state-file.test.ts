import { describe, expect, it } from 'vitest';
import { parseAppliedState, serializeState } from './state-file.ts';

const digest = `sha256:${'a'.repeat(64)}`;

describe('the agent state file', () => {
  it('round-trips', () => {
    const state = {
      generation: 3,
      appliedAt: new Date('2030-01-01T00:00:00.000Z'),
      files: [{ path: 'haproxy.cfg', digest, size: 10 }],
    };
    expect(parseAppliedState(JSON.parse(serializeState(state)))).toEqual(state);
  });

  it.each([
    ['not an object', [], /JSON object/],
    ['a negative generation', { generation: -1, files: [] }, /generation/],
    ['a bad time', { generation: 1, appliedAt: 'never', files: [] }, /appliedAt/],
    [
      'an escaping path',
      { generation: 1, files: [{ path: '../x', digest, size: 1 }] },
      /invalid entry/,
    ],
    [
      'a bad digest',
      { generation: 1, files: [{ path: 'x', digest: 'sha256:zz', size: 1 }] },
      /invalid entry/,
    ],
  ])('rejects %s', (_name, value, problem) => {
    expect(parseAppliedState(value)).toMatch(problem);
  });
});
