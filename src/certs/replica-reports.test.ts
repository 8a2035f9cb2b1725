import type { V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  controllerArgument,
  mountedIdentitySecret,
  podSelector,
  recordedTlsEntries,
  templateConfigFlag,
} from './replica-reports.ts';

function deployment(args: string[], secretName?: string): V1Deployment {
  return {
    spec: {
      selector: { matchLabels: { app: 'haptic', component: 'controller' } },
      template: {
        spec: {
          containers: [{ name: 'controller', args }],
          volumes: secretName === undefined ? [] : [{ name: 'agent-tls', secret: { secretName } }],
        },
      },
    },
  };
}

describe('controllerArgument', () => {
  const controller = deployment([
    '--template-config=haptic-config',
    '--issuer-secret=haptic-agent-ca',
    '--template-configs=other',
  ]);

  it('reads the value of the exact flag', () => {
    expect(controllerArgument(controller, templateConfigFlag)).toBe('haptic-config');
    expect(controllerArgument(controller, '--issuer-secret')).toBe('haptic-agent-ca');
  });

  it('is undefined without the flag, or for a flag that only shares its prefix', () => {
    expect(controllerArgument(deployment(['--issuer-secret=x']), templateConfigFlag)).toBe(
      undefined,
    );
    expect(controllerArgument(controller, '--template')).toBe(undefined);
  });
});

describe('mountedIdentitySecret and podSelector', () => {
  it('read the agent-tls Secret and the matchLabels selector', () => {
    const controller = deployment([], 'haptic-agent-client-tls');
    expect(mountedIdentitySecret(controller)).toBe('haptic-agent-client-tls');
    expect(podSelector(controller)).toBe('app=haptic,component=controller');
  });

  it('have no Secret without an agent-tls volume or with an empty name', () => {
    expect(mountedIdentitySecret(deployment([]))).toBe(undefined);
    expect(mountedIdentitySecret(deployment([], ''))).toBe(undefined);
  });
});

describe('recordedTlsEntries', () => {
  it('is empty for an absent object or one without status.tls', () => {
    expect(recordedTlsEntries(undefined).size).toBe(0);
    expect(recordedTlsEntries({ status: {} }).size).toBe(0);
    expect(recordedTlsEntries({ status: { tls: ['not', 'a', 'map'] } }).size).toBe(0);
  });

  it('parses each entry by Pod name, naming the field of a malformed one', () => {
    const entries = recordedTlsEntries({ status: { tls: { 'haptic-haproxy-0': 'text' } } });
    expect(entries.get('haptic-haproxy-0')).toEqual({
      ok: false,
      field: 'status.tls.haptic-haproxy-0',
      message: 'status.tls.haptic-haproxy-0 must be an object',
    });
  });
});
