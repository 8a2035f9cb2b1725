/**
 * A certificate decoded from DER whose @peculiar/x509 view is built on first use. Parsing a
 * certificate into @peculiar's ASN.1 objects costs over half a millisecond of pure-JS work,
 * and the webhook's Secret review never needs it: chain verification, key matches,
 * fingerprints and messages read the facts decoded with it (certificate-facts.ts), and
 * encoding back to PEM reads only the DER. Readers of @peculiar's fields (names, dates,
 * extensions, signing) get them from `new x509.X509Certificate(der)`, made when first read.
 *
 * Its class is no subclass constructed through @peculiar's constructors: those register every
 * certificate in fourteen weak tables (their private fields), and weak-table entries with
 * young keys are work for every young-generation collection; a stream of new certificates
 * made the webhook's collections ten times longer. It inherits @peculiar's prototype (so
 * `instanceof x509.X509Certificate` holds) and forwards every member to the eager view.
 */
import type * as Peculiar from '@peculiar/x509';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { CertificateFacts } from './certificate-facts.ts';
import { peculiarX509 } from './peculiar-loader.ts';
import type { x509 } from './x509.ts';

interface DeferredClass {
  new (facts: CertificateFacts): object;
  /** The facts a certificate was made with, when it is one of this class. */
  factsOf(certificate: object): CertificateFacts | undefined;
}

let deferredClass: DeferredClass | undefined;

/**
 * The certificate whose facts are `facts` (decoded by decodeCertificateFacts, which owns the
 * DER it keeps). The class is defined on first use (@peculiar/x509 loads then).
 */
export function deferredCertificate(facts: CertificateFacts): x509.X509Certificate {
  deferredClass ??= defineDeferredCertificate(peculiarX509());
  // The prototype chain makes it one (see defineDeferredCertificate); TypeScript cannot see it.
  return new deferredClass(facts) as x509.X509Certificate;
}

/** The facts a deferred certificate was made with; undefined for any other certificate. */
export function deferredFacts(certificate: x509.X509Certificate): CertificateFacts | undefined {
  return deferredClass?.factsOf(certificate);
}

type StringFormat = Parameters<Peculiar.X509Certificate['toString']>[0];

/** Members answered without the eager view: the DER, the PEM label, and PEM encoding. */
const ownMembers = new Set<string | symbol>(['constructor', 'rawData', 'tag', 'toString']);

/** Fields @peculiar's constructors set on each object rather than on the prototype. */
const instanceFields = ['asn'] as const;

function defineDeferredCertificate(peculiar: typeof Peculiar): DeferredClass {
  const { X509Certificate, PemConverter } = peculiar;

  class DeferredCertificate {
    readonly #facts: CertificateFacts;
    #eager: Peculiar.X509Certificate | undefined;

    constructor(facts: CertificateFacts) {
      this.#facts = facts;
    }

    static factsOf(certificate: object): CertificateFacts | undefined {
      return #facts in certificate ? certificate.#facts : undefined;
    }

    /** @peculiar's own view of the same DER, parsed once. */
    static eagerOf(certificate: object): Peculiar.X509Certificate {
      if (!(#eager in certificate)) throw new TypeError('Not a deferred certificate.');
      certificate.#eager ??= parseEager(X509Certificate, certificate.rawData);
      return certificate.#eager;
    }

    /** The DER: the whole buffer of the facts' copy. */
    get rawData(): ArrayBuffer {
      return this.#facts.signed.der.buffer;
    }

    get tag(): string {
      return PemConverter.CertificateTag;
    }

    toString(format: StringFormat = 'pem'): string {
      return format === 'pem'
        ? PemConverter.encode(this.rawData, PemConverter.CertificateTag)
        : DeferredCertificate.eagerOf(this).toString(format);
    }
  }

  forwardMembers(DeferredCertificate.prototype, X509Certificate.prototype, (self) =>
    DeferredCertificate.eagerOf(self),
  );
  Object.setPrototypeOf(DeferredCertificate.prototype, X509Certificate.prototype);
  return DeferredCertificate;
}

/**
 * Defines on `target` every member of `source` and its prototypes (and the fields
 * @peculiar's constructors set) that `target` lacks, each forwarded to `eager(this)`.
 */
function forwardMembers(
  target: object,
  source: object,
  eager: (self: object) => Peculiar.X509Certificate,
): void {
  const methods = new Set<string | symbol>();
  const accessors = new Set<string | symbol>(instanceFields);
  for (let proto: object | null = source; proto !== null && proto !== Object.prototype;) {
    for (const name of Reflect.ownKeys(proto)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(proto, name);
      if (typeof descriptor?.value === 'function') methods.add(name);
      else accessors.add(name);
    }
    proto = Reflect.getPrototypeOf(proto);
  }
  const missing = (name: string | symbol): boolean =>
    !ownMembers.has(name) && !Object.hasOwn(target, name);
  for (const name of [...methods].filter(missing)) {
    Object.defineProperty(target, name, {
      value(this: object, ...args: unknown[]): unknown {
        const view = eager(this);
        const method: unknown = Reflect.get(view, name);
        if (typeof method !== 'function') throw new TypeError(`${String(name)} is no method.`);
        return Reflect.apply(method, view, args);
      },
      configurable: true,
      writable: true,
    });
  }
  for (const name of [...accessors].filter((name) => missing(name) && !methods.has(name))) {
    Object.defineProperty(target, name, {
      get(this: object): unknown {
        return Reflect.get(eager(this), name);
      },
      configurable: true,
    });
  }
}

function parseEager(
  X509Certificate: typeof Peculiar.X509Certificate,
  der: ArrayBuffer,
): Peculiar.X509Certificate {
  try {
    return new X509Certificate(der);
  } catch (error) {
    throw new HapticError(
      errorCodes.PKI_CERTIFICATE_INVALID,
      `A certificate the strict DER reader accepted cannot be decoded by @peculiar/x509 into its ASN.1 fields (${describeError(error)}); reissue it.`,
      { cause: error },
    );
  }
}
