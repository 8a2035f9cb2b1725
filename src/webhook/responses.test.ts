import { describe, expect, it } from 'vitest';
import type { Finding } from '../validation/index.ts';
import { fromReport } from './responses.ts';

const schema: Finding = {
  code: 'ValuesSchemaViolation',
  severity: 'error',
  path: 'controller.replicas',
  message: 'controller.replicas must be at least 1; fix the value.',
};
const key: Finding = {
  code: 'KeyMismatch',
  severity: 'error',
  path: 'secret/agent-identity/tls.key',
  message: 'Secret ns/agent-identity holds a tls.key that does not match tls.crt; write both.',
};
const trust: Finding = {
  code: 'PreviousTrustExpired',
  severity: 'warning',
  path: 'secret/agent-identity/previous-ca-until',
  message: 'The previous CA is no longer trusted.',
};

describe('answers for validation reports', () => {
  it('gives each error its code, path and sentence as a cause, sentences kept in the message', () => {
    const answer = fromReport('u-1', { allowed: false, findings: [schema, trust, key] });
    expect(answer).toEqual({
      uid: 'u-1',
      allowed: false,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: `- ${schema.message}\n- ${key.message}`,
        details: {
          causes: [
            {
              reason: 'ValuesSchemaViolation',
              field: 'controller.replicas',
              message: schema.message,
            },
            { reason: 'KeyMismatch', field: 'secret/agent-identity/tls.key', message: key.message },
          ],
        },
      },
      warnings: [trust.message],
    });
  });

  it('keeps a single sentence as the message, with its one cause', () => {
    const answer = fromReport('u-2', { allowed: false, findings: [schema] });
    expect(answer.status).toMatchObject({
      message: schema.message,
      details: { causes: [{ reason: schema.code, field: schema.path, message: schema.message }] },
    });
  });

  it('sends no status and no causes when allowed, only the warnings', () => {
    expect(fromReport('u-3', { allowed: true, findings: [trust] })).toEqual({
      uid: 'u-3',
      allowed: true,
      warnings: [trust.message],
    });
  });
});
