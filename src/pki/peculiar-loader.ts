/**
 * Loads @peculiar/x509 and the ASN.1 packages beside it on first use, not when src/pki is
 * imported: loading them costs about 90 ms of CPU, and most runs never need them
 * (`haptic preflight` without certificates; the webhook reads certificates natively). Their
 * CommonJS builds are required, all from one build, so every class is one class. The
 * metadata shim their dependency injection needs is installed first, and @peculiar/x509 is
 * pointed at Node's WebCrypto.
 */
import { createRequire } from 'node:module';
import type * as Peculiar from '@peculiar/x509';
import './reflect-metadata.ts';

const load = createRequire(import.meta.url);

let loaded: typeof Peculiar | undefined;

/** The CommonJS package `name` (an @peculiar one), loaded once; the caller names its type. */
export function requirePeculiar(name: string): unknown {
  return load(name);
}

/** @peculiar/x509, loaded and set up the first time. */
export function peculiarX509(): typeof Peculiar {
  if (loaded === undefined) {
    const module = requirePeculiar('@peculiar/x509') as typeof Peculiar;
    module.cryptoProvider.set(globalThis.crypto);
    loaded = module;
  }
  return loaded;
}
