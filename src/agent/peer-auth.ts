/**
 * Who may call the management API, decided for every request (not once per connection), so
 * a trust change also applies to kept-alive connections.
 *
 * mTLS: the agent's own material must be valid now; the client's chain must reach the trust
 * in force now (ca.crt, plus previous-ca.crt until its deadline), carry clientAuth and the DNS
 * SAN `--tls-client-name`; and OpenSSL must have verified it at the handshake as well. Basic
 * authentication is never accepted in this mode.
 *
 * Legacy: HTTP Basic credentials equal to DATAPLANE_USERNAME / DATAPLANE_PASSWORD.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { TlsMaterialSource } from '../tls/material-watcher.ts';
import { peerChainOf } from '../tls/peer-chain.ts';
import { verifyPeer } from '../tls/peer-verification.ts';
import { peerReasons } from '../tls/reasons.ts';
import { materialStatusAt } from '../tls/tls-material.ts';
import { type AgentFailure, agentReasons } from '../agent-api/reasons.ts';

export type PeerDecision =
  { readonly ok: true; readonly peer: string } | ({ readonly ok: false } & AgentFailure);

/** Decides whether one request may proceed. */
export type Authenticate = (request: IncomingMessage) => PeerDecision;

function isTlsSocket(socket: IncomingMessage['socket']): socket is TLSSocket {
  return 'encrypted' in socket && socket.encrypted === true;
}

export interface MutualTlsOptions {
  readonly material: TlsMaterialSource;
  /** DNS SAN the controller's certificate must carry (`--tls-client-name`). */
  readonly clientName: string;
  readonly now?: () => Date;
}

export function mutualTlsAuthenticator(options: MutualTlsOptions): Authenticate {
  const now = options.now ?? (() => new Date());
  return (request) => {
    if (request.headers.authorization !== undefined) {
      return {
        ok: false,
        reason: agentReasons.BasicAuthNotAccepted,
        code: agentReasons.BasicAuthNotAccepted,
        message:
          'This agent authenticates the controller by its client certificate and never accepts an Authorization header; remove it.',
      };
    }
    const at = now();
    const snapshot = options.material.current();
    const status = materialStatusAt(snapshot.decoding, at, snapshot.dir);
    if (!status.ok) {
      return {
        ok: false,
        reason: agentReasons.TlsMaterialInvalid,
        code: status.reason,
        message: `The agent refuses management operations while its TLS material is invalid: ${status.message}`,
      };
    }
    const socket = request.socket;
    if (!isTlsSocket(socket)) {
      return {
        ok: false,
        reason: agentReasons.Unauthenticated,
        code: peerReasons.NoPeerCertificate,
        message: 'The management API requires TLS with a client certificate.',
      };
    }
    const verification = verifyPeer(
      peerChainOf(socket),
      status.trust,
      { purpose: 'clientAuth', dnsName: options.clientName, role: 'the controller' },
      at,
    );
    if (!verification.ok) {
      return {
        ok: false,
        reason:
          verification.reason === peerReasons.NoPeerCertificate
            ? agentReasons.Unauthenticated
            : agentReasons.Forbidden,
        code: verification.reason,
        message: verification.message,
      };
    }
    if (!socket.authorized) {
      return {
        ok: false,
        reason: agentReasons.Forbidden,
        code: peerReasons.HandshakeUnauthorized,
        message: `The TLS handshake did not verify the controller's certificate (${String(socket.authorizationError)}); reconnect.`,
      };
    }
    return { ok: true, peer: verification.subject };
  };
}

export interface BasicAuthOptions {
  readonly username: string;
  readonly password: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Legacy mode: HTTP Basic credentials, compared in constant time. */
export function basicAuthenticator(options: BasicAuthOptions): Authenticate {
  const expected = digest(`${options.username}:${options.password}`);
  return (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    const given =
      match?.[1] === undefined ? undefined : Buffer.from(match[1], 'base64').toString('utf8');
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return {
        ok: false,
        reason: agentReasons.Unauthenticated,
        code: agentReasons.Unauthenticated,
        message:
          "Send HTTP Basic credentials equal to the agent's DATAPLANE_USERNAME and DATAPLANE_PASSWORD.",
      };
    }
    return { ok: true, peer: options.username };
  };
}
