/**
 * GET requests to the API server over one HTTP/2 connection, multiplexed: a command that
 * reads several objects at once (`haptic preflight` reads up to nine) makes one TLS handshake
 * instead of one per request. Measured against the local API server: nine reads in 25–30 ms
 * against 55–80 ms over parallel HTTP/1.1 connections, on a machine where those handshakes
 * compete with helm for the CPU.
 *
 * A server that does not speak HTTP/2 (it refuses the `h2` ALPN protocol, or negotiates none)
 * is told apart from other failures: `Http2Unsupported` is thrown, and the caller sends its
 * requests over HTTP/1.1 instead. The connection never keeps the process alive by itself:
 * it is referenced only while a request is open.
 */
import type { ClientHttp2Session, SecureClientSessionOptions } from 'node:http2';
import type { OutgoingHttpHeaders } from 'node:http';
import { errorCode } from '../errors.ts';

export interface ReadAnswer {
  readonly status: number;
  readonly body: string;
}

/** The server does not speak HTTP/2; nothing was sent. */
export class Http2Unsupported extends Error {
  override readonly name = 'Http2Unsupported';
}

/** OpenSSL's code when the server refuses every ALPN protocol offered (`h2` only). */
const noApplicationProtocol = 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL';

export class Http2Reads {
  readonly #server: string;
  readonly #tls: SecureClientSessionOptions;
  #session: Promise<ClientHttp2Session> | undefined;
  #open = 0;

  /** `tls`: the options of every request (CA, client certificate and key, server name). */
  constructor(server: string, tls: SecureClientSessionOptions) {
    this.#server = server;
    this.#tls = tls;
  }

  /** GETs `path` with `headers`; the status and body, or the connection's error. */
  async get(path: string, headers: OutgoingHttpHeaders): Promise<ReadAnswer> {
    // Counted from now: a connection still being made is referenced for this request too.
    this.#open += 1;
    let session: ClientHttp2Session | undefined;
    try {
      session = await this.#connected();
      session.ref();
      const open = session;
      return await new Promise<ReadAnswer>((resolve, reject) => {
        const stream = open.request({ ...headers, ':method': 'GET', ':path': path });
        let status = 0;
        const chunks: Buffer[] = [];
        stream.on('response', (answer) => {
          status = Number(answer[':status']);
        });
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
        });
        stream.on('error', reject);
        stream.end();
      });
    } finally {
      this.#open -= 1;
      if (this.#open === 0) session?.unref();
    }
  }

  /** The open connection, or a new one once the last has closed or failed. */
  #connected(): Promise<ClientHttp2Session> {
    if (this.#session === undefined) {
      const connecting = this.#connect();
      this.#session = connecting;
      connecting.then(
        (session) => {
          session.once('close', () => {
            if (this.#session === connecting) this.#session = undefined;
          });
        },
        () => {
          if (this.#session === connecting) this.#session = undefined;
        },
      );
    }
    return this.#session;
  }

  #connect(): Promise<ClientHttp2Session> {
    // Loaded here: a command that never reads over HTTP/2 does not load the module.
    const { connect } = process.getBuiltinModule('node:http2');
    return new Promise<ClientHttp2Session>((resolve, reject) => {
      // Referenced while it connects: a request waits for it (get unreferences it once none
      // is open). Unreferenced here, a command whose other work had ended (helm exited, the
      // render process a spare) saw its event loop empty during the TLS handshake and exited
      // with the read unsettled.
      const session = connect(this.#server, this.#tls);
      const failed = (error: Error): void => {
        reject(errorCode(error) === noApplicationProtocol ? new Http2Unsupported() : error);
      };
      session.once('error', failed);
      session.once('connect', () => {
        session.off('error', failed);
        // Later errors reach the open requests' streams; the session then closes.
        session.on('error', () => undefined);
        if (session.alpnProtocol === 'h2') {
          resolve(session);
        } else {
          session.destroy();
          reject(new Http2Unsupported());
        }
      });
    });
  }
}
