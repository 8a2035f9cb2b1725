/**
 * The configuration the tests deliver: HTTP and HTTPS frontends routing through a map to a
 * backend that answers with a marker. The same files go to every replica (as the controller
 * sends them); each HAProxy binds its own address (HAPTIC_LISTEN_ADDRESS, the one variable the
 * lint allows) on the fixed ports below.
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ApplyFile } from '../../../src/agent-api/apply-encoding.ts';
import type { CertificateAuthority } from '../../../src/pki/index.ts';
import type { Replica } from './replica.ts';
import { caPem, leaf } from './test-pki.ts';

export const siteName = 'site.test';
/** Ports every replica binds on its own address. */
export const sitePorts = { http: 8080, https: 8443 } as const;

export function siteConfig(marker: string, extra = ''): string {
  return `global
  default-path config
  log stderr format raw local0

defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s

frontend site
  bind "\${HAPTIC_LISTEN_ADDRESS}:${sitePorts.http}"
  bind "\${HAPTIC_LISTEN_ADDRESS}:${sitePorts.https}" ssl crt ssl/site.pem
  use_backend %[req.hdr(host),field(1,:),lower,map(maps/hosts.map,be_default)]

backend be_site
  http-request return status 200 content-type text/plain lf-string "${marker} ssl=%[ssl_fc]"

backend be_default
  http-request return status 404
${extra}`;
}

/** `count` more backends (a large configuration: HAProxy takes longer to load it). */
export function manyBackends(count: number): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `backend be_${i}\n  balance roundrobin\n  server s1 127.0.0.1:${20_000 + (i % 10_000)} disabled\n`,
  ).join('');
}

export interface Site {
  readonly ca: CertificateAuthority;
  /** ssl/site.pem: certificate and key. */
  readonly pem: Buffer;
}

export async function makeSite(ca: CertificateAuthority): Promise<Site> {
  const pair = await leaf(ca, 'agent', siteName);
  return { ca, pem: Buffer.concat([pair.crt, pair.key]) };
}

export function siteFiles(
  site: Site,
  marker: string,
  options: { extra?: string; more?: readonly ApplyFile[] } = {},
): ApplyFile[] {
  return [
    { path: 'haproxy.cfg', content: Buffer.from(siteConfig(marker, options.extra)) },
    { path: 'maps/hosts.map', content: Buffer.from(`${siteName} be_site\n`) },
    { path: 'ssl/site.pem', content: site.pem },
    ...(options.more ?? []),
  ];
}

/** GET / with Host site.test through a replica's HAProxy, over HTTP or HTTPS. */
export async function fetchSite(
  replica: Replica,
  site: Site,
  scheme: 'http' | 'https',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = {
      host: replica.address,
      port: scheme === 'http' ? replica.httpPort : replica.httpsPort,
      path: '/',
      headers: { host: siteName },
      agent: false as const,
      timeout: 5_000,
    };
    const onResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve(`${response.statusCode ?? 0} ${Buffer.concat(chunks).toString()}`);
      });
    };
    const call =
      scheme === 'http'
        ? httpRequest(options, onResponse)
        : httpsRequest({ ...options, servername: siteName, ca: caPem(site.ca) }, onResponse);
    call.on('error', reject);
    call.on('timeout', () => call.destroy(new Error('timeout')));
    call.end();
  });
}
