/**
 * Certificates for HAProxy from kubernetes.io/tls Secrets (hostile input). tls.crt and
 * tls.key are parsed, every key and signature must be one HAProxy loads (tls-key-policy.ts),
 * the key must belong to the leaf, and the file HAProxy receives is re-encoded from the
 * parsed objects: nothing of the Secret's bytes but the certificates and the key reaches the
 * configuration directory.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describeError } from '../errors.ts';
import { chainRefusal, keyRefusal } from '../validation/tls-key-policy.ts';

export type CertificatePem =
  | { readonly ok: true; readonly pem: string; readonly notAfter: Date }
  | { readonly ok: false; readonly message: string };

const certificateBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** Largest tls.crt or tls.key accepted. */
const maxBytes = 256 * 1024;

function decode(data: Readonly<Record<string, string>>, key: string): Buffer | undefined {
  const value = data[key];
  if (value === undefined || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return undefined;
  return Buffer.from(value, 'base64');
}

/**
 * The PEM file for HAProxy (leaf, intermediates, key) from a Secret's base64 `data`, or why
 * there is none. `label` names the Secret in messages.
 */
export function certificatePem(
  data: Readonly<Record<string, string>>,
  label: string,
  now: Date,
): CertificatePem {
  const crt = decode(data, 'tls.crt');
  const key = decode(data, 'tls.key');
  if (crt === undefined || key === undefined || crt.length === 0 || key.length === 0) {
    return {
      ok: false,
      message: `Secret ${label} has no readable tls.crt and tls.key; create it with kubectl create secret tls.`,
    };
  }
  if (crt.length > maxBytes || key.length > maxBytes) {
    return {
      ok: false,
      message: `Secret ${label} has a tls.crt or tls.key over ${maxBytes} bytes.`,
    };
  }
  try {
    const blocks = crt.toString('latin1').match(certificateBlock) ?? [];
    const chain = blocks.map((block) => new X509Certificate(block));
    const [leaf] = chain;
    if (leaf === undefined) {
      return { ok: false, message: `Secret ${label} has no PEM certificate in tls.crt.` };
    }
    const privateKey = createPrivateKey({ key, format: 'pem' });
    const refusal = keyRefusal(privateKey, 'tls.key') ?? chainRefusal(chain);
    if (refusal !== undefined) return { ok: false, message: `Secret ${label}: ${refusal}.` };
    if (!leaf.checkPrivateKey(privateKey)) {
      return {
        ok: false,
        message: `Secret ${label}: tls.key does not belong to the first certificate of tls.crt; put the matching key in tls.key.`,
      };
    }
    const notAfter = new Date(leaf.validTo);
    if (notAfter.getTime() <= now.getTime()) {
      return {
        ok: false,
        message: `Secret ${label}: the certificate expired at ${notAfter.toISOString()}; renew it.`,
      };
    }
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    return {
      ok: true,
      pem: `${chain.map((c) => c.toString().trim()).join('\n')}\n${keyPem}`,
      notAfter,
    };
  } catch (error) {
    return {
      ok: false,
      message: `Secret ${label} holds no usable certificate and key: ${describeError(error)}.`,
    };
  }
}
