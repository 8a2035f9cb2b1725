import { describe, expect, it } from 'vitest';
import { agentReasons, errorBodyOf } from './reasons.ts';

describe('errorBodyOf', () => {
  it('carries field and haproxyMessage only when the failure has them', () => {
    const reason = agentReasons.PathInvalid;
    expect(errorBodyOf({ reason, code: reason, message: 'm.' })).toStrictEqual({
      error: { reason, code: reason, message: 'm.' },
    });
    expect(
      errorBodyOf({
        reason: agentReasons.ConfigRejected,
        code: agentReasons.ConfigRejected,
        message: 'HAProxy rejected the configuration.',
        field: 'files[0]',
        haproxyMessage: "haproxy.cfg:3: unknown keyword 'frontnd'",
      }),
    ).toStrictEqual({
      error: {
        reason: 'ConfigRejected',
        code: 'ConfigRejected',
        message: 'HAProxy rejected the configuration.',
        field: 'files[0]',
        haproxyMessage: "haproxy.cfg:3: unknown keyword 'frontnd'",
      },
    });
  });
});
