/**
 * Certificates for HAProxy from kubernetes.io/tls Secrets (hostile input). tls.crt and
 * tls.key are decoded by the one Secret decoder (src/secrets), every key and signature must be
 * one HAProxy loads (tls-key-policy.ts), the key must belong to the leaf, and the file HAProxy
 * receives is re-encoded from the decoded objects: nothing of the Secret's bytes but the
 * certificates and the key reaches the configuration directory.
 */
import {
  encodeCertificateChain,
  encodePrivateKey,
  keyMatchesCertificate,
} from '../../pki/index.ts';
import { decodeServedKeyPair } from '../../secrets/key-pair-secret.ts';
import { chainRefusal, keyRefusal } from '../../validation/tls-key-policy.ts';

export type CertificatePem =
  | { readonly ok: true; readonly pem: string; readonly notAfter: Date }
  | { readonly ok: false; readonly message: string };

/** Largest tls.crt or tls.key accepted. */
const maxBytes = 256 * 1024;

/** The PEM file of `data`, or why there is none, at any time (its expiry is not checked). */
function decodedPem(data: Readonly<Record<string, string>>, label: string): CertificatePem {
  const decoded = decodeServedKeyPair(data, `Secret ${label}`, { maxBytes });
  if (decoded.state === 'unparsable') {
    return {
      ok: false,
      message: `${decoded.problem.message} Store the certificate (leaf, then intermediates) in tls.crt and its key in tls.key, both PEM, for example with kubectl create secret tls.`,
    };
  }
  const { chain, privateKey } = decoded.material;
  const [leaf] = chain;
  const refusal = keyRefusal(privateKey, 'tls.key') ?? chainRefusal(chain);
  if (refusal !== undefined) return { ok: false, message: `Secret ${label}: ${refusal}.` };
  if (!keyMatchesCertificate(privateKey, leaf)) {
    return {
      ok: false,
      message: `Secret ${label}: tls.key does not belong to the first certificate of tls.crt; put the matching key in tls.key.`,
    };
  }
  return {
    ok: true,
    pem: `${encodeCertificateChain(chain)}${encodePrivateKey(privateKey)}`,
    notAfter: leaf.notAfter,
  };
}

/**
 * Each Secret content's decoding, by its `data` object: every model build reads every TLS
 * Secret an Ingress names, and a Secret view is replaced, never changed, when the Secret is.
 */
const decodedByData = new WeakMap<
  Readonly<Record<string, string>>,
  { readonly label: string; readonly pem: CertificatePem }
>();

/**
 * The PEM file for HAProxy (leaf, intermediates, key) from a Secret's base64 `data`, or why
 * there is none at `now`. `label` names the Secret in messages.
 */
export function certificatePem(
  data: Readonly<Record<string, string>>,
  label: string,
  now: Date,
): CertificatePem {
  let kept = decodedByData.get(data);
  if (kept?.label !== label) {
    kept = { label, pem: decodedPem(data, label) };
    decodedByData.set(data, kept);
  }
  const { pem } = kept;
  if (pem.ok && pem.notAfter.getTime() <= now.getTime()) {
    return {
      ok: false,
      message: `Secret ${label}: the certificate expired at ${pem.notAfter.toISOString()}; renew it.`,
    };
  }
  return pem;
}
