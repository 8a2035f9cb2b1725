import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { certificateProviderLabel } from '../../../src/secrets/provider-markers.ts';
import { createTestNamespace } from '../../support/cluster.ts';
import { opensslVerify } from './peer-verification.ts';
import { renewalServiceAccount } from './chart-objects.ts';
import {
  certificates,
  fingerprint,
  generation,
  names,
  readSecrets,
  renew,
  summary,
  text,
  versions,
  written,
} from './renewal-harness.ts';

async function opensslText(pem: string): Promise<string> {
  return (await execa('openssl', ['x509', '-noout', '-text'], { input: pem })).stdout;
}

describe('haptic certificates renew: bootstrap and steady state', () => {
  it('creates the issuer and both identity Secrets under the renewal CronJob RBAC, then does nothing with three reads', async () => {
    const ns = await createTestNamespace('certs-boot');
    const kubeconfig = await renewalServiceAccount(ns);

    const first = await renew(ns, { kubeconfig });
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    expect(written(first)).toEqual([
      `${ns}/${names.issuer}`,
      `${ns}/${names.server}`,
      `${ns}/${names.client}`,
    ]);
    expect(summary(first)?.requests).toEqual({ GET: 3, POST: 3 });

    const state = await readSecrets(ns);
    expect(state.issuer?.type).toBe('Opaque');
    expect(Object.keys(state.issuer?.data ?? {}).sort()).toEqual([
      'generation',
      'tls.crt',
      'tls.key',
    ]);
    expect(generation(state)).toBe(1);
    for (const identity of [state.server, state.client]) {
      expect(identity?.type).toBe('kubernetes.io/tls');
      expect(Object.keys(identity?.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
      expect(certificates(identity, 'tls.crt')).toHaveLength(1);
      expect(fingerprint(identity, 'ca.crt')).toBe(fingerprint(state.issuer, 'tls.crt'));
    }
    for (const secret of [state.issuer, state.server, state.client]) {
      expect(secret?.metadata?.labels).toEqual({ [certificateProviderLabel]: 'default' });
      // No owner and nothing Helm recognises: the Secrets survive `helm uninstall`.
      expect(secret?.metadata?.ownerReferences).toBeUndefined();
      expect(secret?.metadata?.annotations).toBeUndefined();
    }

    const now = new Date();
    const ca = certificates(state.issuer, 'tls.crt');
    const server = await opensslVerify({
      chain: certificates(state.server, 'tls.crt'),
      anchors: ca,
      at: now,
      purpose: 'sslserver',
      hostname: 'haptic-agent',
    });
    expect(server.output).toMatch(/: OK$/m);
    const client = await opensslVerify({
      chain: certificates(state.client, 'tls.crt'),
      anchors: ca,
      at: now,
      purpose: 'sslclient',
      hostname: 'haptic-controller',
    });
    expect(client.output).toMatch(/: OK$/m);
    // An agent certificate never authenticates as the controller, nor the reverse.
    const swapped = await opensslVerify({
      chain: certificates(state.server, 'tls.crt'),
      anchors: ca,
      at: now,
      purpose: 'sslclient',
      hostname: 'haptic-agent',
    });
    expect(swapped.ok).toBe(false);

    const steady = await renew(ns, { kubeconfig });
    expect(steady.exitCode).toBe(0);
    expect(written(steady)).toEqual([]);
    expect(summary(steady)?.requests).toEqual({ GET: 3 });
    expect(summary(steady)?.msg).toBe(
      'Nothing to do: the CA (generation 1) and both identities are up to date.',
    );
    expect(versions(await readSecrets(ns))).toEqual(versions(state));
  });

  it('issues what the guide issues with openssl: a P-256 CA and role-bound leaves', async () => {
    const ns = await createTestNamespace('certs-shape');
    expect((await renew(ns)).exitCode).toBe(0);
    const state = await readSecrets(ns);

    const ca = await opensslText(text(state.issuer, 'tls.crt') ?? '');
    expect(ca).toContain('ASN1 OID: prime256v1');
    expect(ca).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE/);
    expect(ca).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(ca).toContain('Subject: CN = haptic-agent-ca-1');

    const agent = await opensslText(text(state.server, 'tls.crt') ?? '');
    expect(agent).toContain('ASN1 OID: prime256v1');
    expect(agent).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
    expect(agent).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(agent).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication\n/);
    expect(agent).toMatch(/X509v3 Subject Alternative Name:\s+DNS:haptic-agent\n/);
    expect(agent).toMatch(/Serial Number:\s*\n\s+([0-9a-f]{2}:){15}[0-9a-f]{2}\n/);

    const controller = await opensslText(text(state.client, 'tls.crt') ?? '');
    expect(controller).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Client Authentication\n/);
    expect(controller).toMatch(/X509v3 Subject Alternative Name:\s+DNS:haptic-controller\n/);

    for (const key of [text(state.server, 'tls.key'), text(state.client, 'tls.key')]) {
      const pub = await execa('openssl', ['pkey', '-pubout'], { input: key ?? '' });
      expect(pub.stdout).toContain('BEGIN PUBLIC KEY');
    }
  });

  it('rejects unusable flags with exit code 2 and a bad validity with a refusal', async () => {
    const ns = await createTestNamespace('certs-flags');
    const letters = await renew(ns, { extra: ['--validity-days=soon'] });
    expect(letters.exitCode).toBe(2);
    expect(letters.stderr).toContain("option '--validity-days <days>' argument 'soon' is invalid");
    const same = await renew(ns, { extra: [`--client-secret=${names.server}`] });
    expect(same.exitCode).toBe(2);
    expect(same.stderr).toContain('must name three different Secrets');

    const zero = await renew(ns, { validityDays: 0 });
    expect(zero.exitCode).toBe(1);
    expect(zero.stderr.trim().split('\n')).toEqual([
      'haptic: haproxy.agent.tls.certValidityDays must be a whole number of days of at least 1, not 0; fix the value and rerun the Job.',
    ]);
    expect(versions(await readSecrets(ns))).toEqual({
      issuer: undefined,
      server: undefined,
      client: undefined,
    });
  });
});
