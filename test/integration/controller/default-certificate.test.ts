/**
 * The default frontend certificate (defaultSSLCertificate.secretName) as HAProxy serves it: an
 * Ingress without TLS of its own is answered over HTTPS with that certificate, on every replica
 * of the chart's release.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HAProxyReplica, LocalSite, eventually } from './local-site.ts';

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
    await site.apply(
      site.ingress('plain', [
        {
          host: 'plain.example.test',
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
      ]),
    );
    const current = site;
    const answers = await eventually(
      'HTTPS answers for plain.example.test',
      () => current.everywhere('plain.example.test', '/', ['https']),
      (all) => all.length > 0 && all.every((answer) => answer === '200 web /'),
      90_000,
    );
    expect(answers).toEqual(site.replicas.map(() => '200 web /'));
    for (const replica of site.replicas) {
      expect(await servedFingerprint(replica, 'plain.example.test')).toBe(expected);
    }
  }, 300_000);
});
