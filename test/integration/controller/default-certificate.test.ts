/**
 * The default frontend certificate as HAProxy serves it: an Ingress without TLS of its own is
 * answered over HTTPS with that certificate, on every replica of the chart's release, whether it
 * is an external Secret (defaultSSLCertificate.secretName) or the one cert-manager issues
 * (defaultSSLCertificate.certManager.enabled; written after the controller started, as
 * cert-manager v1.21 writes it).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Certificate, generateKeyPair } from '../../../src/pki/index.ts';
import { peculiarX509 } from '../../../src/pki/peculiar-loader.ts';
import { certManagerCrds } from '../chart/cert-manager-crds.ts';
import { applyAsCertManager } from '../../support/cert-manager-secret.ts';
import { kubectl } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';
import { type HAProxyReplica, LocalSite } from './local-site.ts';

/** The SHA-256 fingerprint of the certificate a replica presents on :8443 for `host`. */
function servedFingerprint(replica: HAProxyReplica, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: replica.address,
      port: 8443,
      servername: host,
      rejectUnauthorized: false,
      timeout: 5_000,
    });
    socket.once('secureConnect', () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? 'none');
      socket.end();
    });
    socket.once('timeout', () => socket.destroy(new Error('timeout')));
    socket.once('error', reject);
  });
}

/** An Ingress for `host` without TLS, to the backend `web`. */
function plainIngress(site: LocalSite, host: string): Record<string, unknown> {
  return site.ingress('plain', [
    {
      host,
      http: {
        paths: [
          {
            path: '/',
            pathType: 'Prefix',
            backend: { service: { name: 'web', port: { number: 80 } } },
          },
        ],
      },
    },
  ]);
}

/** Waits until every replica answers HTTPS for `host` from `web`, then the certificates served. */
async function servedCertificates(site: LocalSite, host: string): Promise<string[]> {
  await eventually(
    `HTTPS answers for ${host}`,
    () => site.everywhere(host, '/', ['https']),
    (all) => all.length > 0 && all.every((answer) => answer === '200 web /'),
    90_000,
  );
  const prints: string[] = [];
  for (const replica of site.replicas) prints.push(await servedFingerprint(replica, host));
  return prints;
}

describe('the default frontend certificate, served by HAProxy', () => {
  let site: LocalSite | undefined;

  beforeAll(async () => {
    site = await LocalSite.start('default-cert', { controllers: 1 });
  }, 300_000);

  afterAll(async () => {
    await site?.stop();
  });

  it('answers HTTPS for an Ingress without TLS with defaultSSLCertificate.secretName', async () => {
    if (site === undefined) throw new Error('the site did not start');
    await site.addBackend('web');
    const certFile = await site.tlsSecret('frontend-default', 'default.example.test');
    const expected = new X509Certificate(readFileSync(certFile)).fingerprint256;
    await site.upgrade(['--set', 'defaultSSLCertificate.secretName=frontend-default']);
    await site.apply(plainIngress(site, 'plain.example.test'));
    expect(await servedCertificates(site, 'plain.example.test')).toEqual(
      site.replicas.map(() => expected),
    );
  }, 300_000);
});

describe('the default frontend certificate from cert-manager, served by HAProxy', () => {
  let site: LocalSite | undefined;

  beforeAll(async () => {
    const crds = await kubectl(
      ['apply', '--server-side', '--field-manager=chart-test', '-f', '-'],
      await certManagerCrds(),
    );
    expect(crds.stderr).toBe('');
    const established = await kubectl([
      ...['wait', '--for=condition=Established', '--timeout=60s'],
      'crd/certificates.cert-manager.io',
      'crd/issuers.cert-manager.io',
    ]);
    expect({ exitCode: established.exitCode, stderr: established.stderr }).toEqual({
      exitCode: 0,
      stderr: '',
    });
    site = await LocalSite.start('default-cert-cm', {
      values: ['--set', 'defaultSSLCertificate.certManager.enabled=true'],
    });
  }, 300_000);

  afterAll(async () => {
    await site?.stop();
  });

  it('serves the Secret cert-manager writes after the controller started', async () => {
    if (site === undefined) throw new Error('the site did not start');
    await site.addBackend('web');
    await site.apply(plainIngress(site, 'app.localdev.me'));
    // cert-manager's self-signed Issuer signs the Certificate with its own key: ca.crt is the
    // certificate itself, and the chain is just the certificate.
    const keys = await generateKeyPair();
    const x509 = peculiarX509();
    const generated = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0c3a',
      name: 'CN=localdev.me',
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 365 * 86_400_000),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      keys,
      extensions: [
        new x509.SubjectAlternativeNameExtension([
          { type: 'dns', value: 'localdev.me' },
          { type: 'dns', value: '*.localdev.me' },
        ]),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ],
    });
    const certificate = Certificate.fromDer(new Uint8Array(generated.rawData));
    const written = await applyAsCertManager(site.namespace, {
      secret: 'haptic-default-ssl-certificate',
      certificateName: 'haptic-default-ssl-certificate',
      issuer: { name: 'haptic-selfsigned', kind: 'Issuer' },
      chain: [certificate],
      keys,
      ca: certificate,
      dnsNames: ['localdev.me', '*.localdev.me'],
    });
    expect(written.stderr).toBe('');
    const expected = new X509Certificate(certificate.toPem()).fingerprint256;
    const current = site;
    expect(
      await eventually(
        'the cert-manager certificate served for app.localdev.me',
        () => servedCertificates(current, 'app.localdev.me'),
        (prints) => prints.every((print) => print === expected),
        90_000,
      ),
    ).toEqual(site.replicas.map(() => expected));
  }, 300_000);
});
