/**
 * A certificate decoded from DER whose @peculiar/x509 view is built on first use. Parsing a
 * certificate into @peculiar's ASN.1 objects costs over half a millisecond of pure-JS work,
 * and the webhook's Secret review never needs it: chain verification, key matches,
 * fingerprints and messages read the native facts (certificate-facts.ts), and encoding back
 * to PEM reads only the DER. Readers of @peculiar's fields (names, dates, extensions,
 * signing) get them as from `new x509.X509Certificate(der)`, parsed once when first read.
 */
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { x509 } from './x509.ts';

/** What the base constructor stores until the first read replaces it; never read itself. */
const unparsed = new Certificate();

export class DeferredCertificate extends x509.X509Certificate {
  readonly #der: ArrayBuffer;

  /** `der` must be a certificate Node's X509Certificate accepts; it is kept as given. */
  constructor(der: Uint8Array) {
    super(unparsed);
    const copy = new Uint8Array(der);
    this.#der = copy.buffer;
    let structure: Certificate | undefined;
    Object.defineProperty(this, 'asn', {
      get: () => (structure ??= parseStructure(copy)),
    });
  }

  override get rawData(): ArrayBuffer {
    return this.#der;
  }
}

function parseStructure(der: Uint8Array): Certificate {
  try {
    return AsnConvert.parse(der, Certificate);
  } catch (error) {
    throw new HapticError(
      errorCodes.PKI_CERTIFICATE_INVALID,
      `A certificate OpenSSL decoded cannot be decoded into its ASN.1 fields (${describeError(error)}); reissue it.`,
      { cause: error },
    );
  }
}
