/**
 * The default provider's issuer Secret: the CA (tls.crt, exactly one certificate), its key
 * (tls.key), the CA generation, and during a rotation the previous CA, the cross-signed CA and
 * the end of the overlap. Decoded from hostile data into the `unparsable` state with the
 * problem's key, never an exception; encoded back as `V1Secret.data` carries it.
 */
import { encodeCertificateChain, encodePrivateKey } from '../pki/index.ts';
import { type SecretData, issuerSecretKeys } from './layout.ts';
import type { CaRotation, IssuerMaterial, IssuerState } from './material.ts';
import { secretReasons } from './reasons.ts';
import { SecretFields, decodeWith, encodeBase64, inSecret } from './secret-fields.ts';
import { formatUtcTimestamp } from './utc-timestamp.ts';

const generationPattern = /^[1-9][0-9]{0,14}$/;

function rotationOf(fields: SecretFields): CaRotation | undefined {
  const { previousCa, previousCaUntil, crossSignedCa } = issuerSecretKeys;
  if (!fields.together([previousCa, previousCaUntil, crossSignedCa])) return undefined;
  return {
    previousCa: fields.certificate(previousCa),
    crossSignedCa: fields.certificate(crossSignedCa),
    until: fields.timestamp(previousCaUntil),
  };
}

function generationOf(fields: SecretFields): number {
  const key = issuerSecretKeys.generation;
  const text = fields.text(key);
  if (!generationPattern.test(text)) {
    fields.fail(
      key,
      secretReasons.ValueInvalid,
      `${fields.keyName(key)} must be a positive whole number, not "${text.slice(0, 20)}".`,
    );
  }
  return Number(text);
}

/**
 * Decodes the issuer Secret's data (`undefined` when the Secret does not exist). `secret` names
 * it in problems, for example `Secret haptic/haptic-agent-issuer`.
 */
export function decodeIssuerSecret(data: SecretData | undefined, secret: string): IssuerState {
  if (data === undefined) return { state: 'absent' };
  const fields = new SecretFields(data, inSecret(secret));
  return decodeWith((): IssuerMaterial => {
    const certificate = fields.certificate(issuerSecretKeys.certificate);
    const key = fields.privateKey(issuerSecretKeys.privateKey);
    const generation = generationOf(fields);
    const rotation = rotationOf(fields);
    return {
      certificate,
      get privateKey() {
        return key.privateKey;
      },
      publicKeyInfo: key.publicKeyInfo,
      generation,
      ...(rotation === undefined ? {} : { rotation }),
    };
  });
}

/** The issuer Secret's `data` (base64 values, as `V1Secret.data` carries them) for this material. */
export function encodeIssuerSecret(material: IssuerMaterial): Record<string, string> {
  const data: Record<string, string> = {
    [issuerSecretKeys.certificate]: encodeBase64(encodeCertificateChain([material.certificate])),
    [issuerSecretKeys.privateKey]: encodeBase64(encodePrivateKey(material.privateKey)),
    [issuerSecretKeys.generation]: encodeBase64(String(material.generation)),
  };
  const rotation = material.rotation;
  if (rotation !== undefined) {
    data[issuerSecretKeys.previousCa] = encodeBase64(encodeCertificateChain([rotation.previousCa]));
    data[issuerSecretKeys.crossSignedCa] = encodeBase64(
      encodeCertificateChain([rotation.crossSignedCa]),
    );
    data[issuerSecretKeys.previousCaUntil] = encodeBase64(formatUtcTimestamp(rotation.until));
  }
  return data;
}
