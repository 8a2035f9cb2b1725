/**
 * The one way into @peculiar/x509: installs the metadata shim its dependency injection needs
 * and points it at Node's WebCrypto. Every module imports x509 from here, never directly.
 */
import './reflect-metadata.ts';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(globalThis.crypto);

export { x509 };
