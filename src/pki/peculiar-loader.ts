/**
 * The one way into @peculiar/x509, which builds and signs certificates (generate.ts): loaded
 * on first use, not when src/pki is imported, since loading it (and its ASN.1 packages) costs
 * about 90 ms of CPU, and runs that issue no certificate never need it; reading certificates
 * needs none of it (certificate.ts). The CommonJS build is required, so every class is one
 * class. The metadata shim its dependency injection needs is installed first, and
 * @peculiar/x509 is pointed at Node's WebCrypto.
 */
import { createRequire } from 'node:module';
import type * as Peculiar from '@peculiar/x509';
import './reflect-metadata.ts';

const load = createRequire(import.meta.url);

let loaded: typeof Peculiar | undefined;

/** @peculiar/x509, loaded and set up the first time. */
export function peculiarX509(): typeof Peculiar {
  if (loaded === undefined) {
    const module = load('@peculiar/x509') as typeof Peculiar;
    module.cryptoProvider.set(globalThis.crypto);
    loaded = module;
  }
  return loaded;
}
