import { describe, expect, it } from 'vitest';
import { errorCodes } from '../errors.ts';
import { kubeStatusError, kubeUnreachableError } from './status-error.ts';

const status = (message: string): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code: 403 });

describe('kubeStatusError', () => {
  it('names the refused action, the API server’s message and the fix for 401 and 403', () => {
    const error = kubeStatusError('read Secret haptic/x', 403, status('secrets "x" is forbidden'));
    expect(error.code).toBe(errorCodes.KUBE_FORBIDDEN);
    expect(error.message).toBe(
      'The Kubernetes API refused to read Secret haptic/x (HTTP 403: secrets "x" is forbidden); grant this ServiceAccount the permission or use other credentials.',
    );
    expect(kubeStatusError('read Secret haptic/x', 401, '').code).toBe(errorCodes.KUBE_FORBIDDEN);
  });

  it('says what failed for other statuses, with a body that is not a Status trimmed', () => {
    const error = kubeStatusError('read Secret haptic/x', 500, '  upstream broke \n');
    expect(error.code).toBe(errorCodes.KUBE_REQUEST_FAILED);
    expect(error.message).toBe('Could not read Secret haptic/x: HTTP 500: upstream broke.');
    expect(kubeStatusError('read Secret haptic/x', 502, '').message).toBe(
      'Could not read Secret haptic/x: HTTP 502.',
    );
  });
});

describe('kubeUnreachableError', () => {
  it('names the action and why no answer came', () => {
    const error = kubeUnreachableError('read Secret haptic/x', new Error('connect ECONNREFUSED'));
    expect(error.code).toBe(errorCodes.KUBE_REQUEST_FAILED);
    expect(error.message).toBe('Could not read Secret haptic/x: connect ECONNREFUSED.');
  });
});
