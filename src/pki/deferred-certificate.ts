/**
 * A certificate decoded from DER whose @peculiar/x509 view is built on first use. Parsing a
 * certificate into @peculiar's ASN.1 objects costs over half a millisecond of pure-JS work,
 * and the webhook's Secret review never needs it: chain verification, key matches,
 * fingerprints and messages read the native facts (certificate-facts.ts), and encoding back
 * to PEM reads only the DER. Readers of @peculiar's fields (names, dates, extensions,
 * signing) get them as from `new x509.X509Certificate(der)`, parsed once when first read.
 */
import type * as AsnSchema from '@peculiar/asn1-schema';
import type * as AsnX509 from '@peculiar/asn1-x509';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { requirePeculiar } from './peculiar-loader.ts';
import { x509 } from './x509.ts';

type Deferred = new (der: Uint8Array) => x509.X509Certificate;

let deferredClass: Deferred | undefined;

/**
 * The certificate `der` (which must be one Node's X509Certificate accepts; it is kept as
 * given). The class is defined on first use, since it extends @peculiar/x509's (x509.ts).
 */
export function deferredCertificate(der: Uint8Array): x509.X509Certificate {
  deferredClass ??= defineDeferredCertificate();
  return new deferredClass(der);
}

function defineDeferredCertificate(): Deferred {
  const { AsnConvert } = requirePeculiar('@peculiar/asn1-schema') as typeof AsnSchema;
  const { Certificate } = requirePeculiar('@peculiar/asn1-x509') as typeof AsnX509;
  /** What the base constructor stores until the first read replaces it; never read itself. */
  const unparsed = new Certificate();

  function parseStructure(der: Uint8Array): AsnX509.Certificate {
    try {
      return AsnConvert.parse(der, Certificate);
    } catch (error) {
      throw unparsable(error);
    }
  }

  return class DeferredCertificate extends x509.X509Certificate {
    readonly #der: ArrayBuffer;

    constructor(der: Uint8Array) {
      super(unparsed);
      const copy = new Uint8Array(der);
      this.#der = copy.buffer;
      let structure: AsnX509.Certificate | undefined;
      Object.defineProperty(this, 'asn', {
        get: () => (structure ??= parseStructure(copy)),
      });
    }

    override get rawData(): ArrayBuffer {
      return this.#der;
    }
  };
}

function unparsable(error: unknown): HapticError {
  return new HapticError(
    errorCodes.PKI_CERTIFICATE_INVALID,
    `A certificate OpenSSL decoded cannot be decoded into its ASN.1 fields (${describeError(error)}); reissue it.`,
    { cause: error },
  );
}
