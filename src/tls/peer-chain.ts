/**
 * The certificate chain a TLS peer presented, as decoded certificates: the leaf first, then
 * what the peer sent after it. Decoded once per connection and cached, so re-checking the
 * peer on every request of a kept-alive connection costs no decoding.
 */
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { decodeCertificateChain, type Certificate } from '../pki/index.ts';

/** Longest chain taken from a peer. */
const maxChainLength = 8;

const chains = new WeakMap<TLSSocket, readonly Certificate[]>();

function pem(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`;
}

/** Node reports "no certificate" as an empty object. */
function isCertificate(value: object | undefined): value is DetailedPeerCertificate {
  return value !== undefined && 'raw' in value && Buffer.isBuffer(value.raw);
}

/**
 * Decodes the chain Node reports for a peer (leaf, then issuers as linked by OpenSSL, ending
 * at a self-issued certificate). Empty when the peer sent no certificate or sent one that
 * cannot be decoded.
 */
export function decodePeerChain(certificate: object): readonly Certificate[] {
  const ders: Buffer[] = [];
  let current: object | undefined = certificate;
  while (isCertificate(current) && ders.length < maxChainLength) {
    ders.push(current.raw);
    const issuer: object = current.issuerCertificate;
    current = issuer === current ? undefined : issuer;
  }
  if (ders.length === 0) return [];
  try {
    return decodeCertificateChain(ders.map(pem).join(''), 'The peer certificate chain');
  } catch {
    return [];
  }
}

/** The peer's chain on this connection (cached for the connection's lifetime). */
export function peerChainOf(socket: TLSSocket): readonly Certificate[] {
  let chain = chains.get(socket);
  if (chain === undefined) {
    chain = decodePeerChain(socket.getPeerCertificate(true));
    chains.set(socket, chain);
  }
  return chain;
}
