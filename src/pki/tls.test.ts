import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { type TLSSocket, connect, createServer } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { verifyChain } from './chain.ts';
import {
  type CertificateAuthority,
  backdateMs,
  crossSignCa,
  issueCa,
  issueLeaf,
} from './generate.ts';
import { encodePrivateKey } from './keys.ts';
import { encodeCertificateChain } from './parse.ts';
import { Certificate } from './certificate.ts';

// Node's TLS stack checks validity against the real clock, so these certificates start now.
const now = new Date();

async function authority(commonName: string): Promise<CertificateAuthority> {
  const { certificate, keys } = await issueCa({ commonName, validityDays: 30, now });
  return { certificate, privateKey: keys.privateKey };
}

interface Material {
  readonly key: string;
  readonly cert: string;
  readonly ca: string;
}

async function identity(
  role: 'agent' | 'controller',
  issuer: CertificateAuthority,
  trust: readonly Certificate[],
  intermediates: readonly Certificate[] = [],
): Promise<Material> {
  const dnsName = `${role}.example.internal`;
  const leaf = await issueLeaf({ role, dnsName, issuer, validityDays: 30, now });
  return {
    key: encodePrivateKey(leaf.keys.privateKey),
    cert: encodeCertificateChain([leaf.certificate, ...intermediates]),
    ca: encodeCertificateChain(trust),
  };
}

interface Outcome {
  readonly clientError: string | undefined;
  /** The client's leaf as the server received it. */
  readonly serverSawClient: readonly Certificate[];
}

/** One TLS handshake between an agent-like server and a controller-like client. */
async function handshake(server: Material, client: Material): Promise<Outcome> {
  const seen: Certificate[] = [];
  const listener = createServer(
    { ...server, requestCert: true, rejectUnauthorized: true },
    (socket: TLSSocket) => {
      seen.push(Certificate.fromDer(socket.getPeerCertificate(true).raw));
      socket.end('ok');
    },
  );
  listener.on('tlsClientError', () => undefined);
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as AddressInfo;
  try {
    const socket = connect({
      ...client,
      host: '127.0.0.1',
      port,
      servername: 'agent.example.internal',
    });
    const outcome = await new Promise<string | undefined>((resolve) => {
      socket.on('data', () => {
        resolve(undefined);
      });
      socket.on('error', (error: Error) => {
        resolve(error.message);
      });
      socket.on('close', () => {
        resolve('closed without data');
      });
    });
    socket.destroy();
    return { clientError: outcome, serverSawClient: seen };
  } finally {
    listener.close();
  }
}

const oldCa = await authority('haptic-agent-ca');
const newCa = await authority('haptic-agent-ca');

describe('material from this module in a real Node TLS handshake', () => {
  it('authenticates agent and controller to each other under one CA', async () => {
    const agent = await identity('agent', oldCa, [oldCa.certificate]);
    const controller = await identity('controller', oldCa, [oldCa.certificate]);
    const outcome = await handshake(agent, controller);
    expect(outcome.clientError).toBeUndefined();
    const [leaf] = outcome.serverSawClient;
    const result = verifyChain({
      chain: outcome.serverSawClient,
      anchors: [oldCa.certificate],
      now: new Date(),
      purpose: 'clientAuth',
      dnsName: 'controller.example.internal',
    });
    expect(result.ok).toBe(true);
    expect(leaf?.subject).toBe('CN=controller.example.internal');
  });

  it('lets a new agent identity sent with the cross-signed CA authenticate to a client trusting only the old CA', async () => {
    const crossSigned = await crossSignCa({
      certificate: newCa.certificate,
      issuer: oldCa,
      notBefore: new Date(now.getTime() - backdateMs),
      notAfter: new Date(now.getTime() + 3_600_000),
    });
    const agent = await identity(
      'agent',
      newCa,
      [newCa.certificate, oldCa.certificate],
      [crossSigned],
    );
    const controller = await identity('controller', oldCa, [oldCa.certificate]);
    expect((await handshake(agent, controller)).clientError).toBeUndefined();
  });

  it('refuses a new agent identity without the cross-signed CA when the client trusts only the old CA', async () => {
    const agent = await identity('agent', newCa, [newCa.certificate]);
    const controller = await identity('controller', oldCa, [oldCa.certificate]);
    expect((await handshake(agent, controller)).clientError).toMatch(/certificate/i);
  });

  it('refuses a client certificate that carries only serverAuth', async () => {
    const agent = await identity('agent', oldCa, [oldCa.certificate]);
    const impostor = await identity('agent', oldCa, [oldCa.certificate]);
    expect((await handshake(agent, impostor)).clientError).toBeDefined();
  });
});
