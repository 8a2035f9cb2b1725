/**
 * What a Pod mounting an identity Secret should have loaded, as the convergence view compares
 * it: fingerprints of `ca.crt`, of `previous-ca.crt` while `previous-ca-until` lies ahead (and
 * no more than the accepted 24 hours), and the serial of the certificate in `tls.crt`. Pure:
 * the Secret's data and `now` in. Only public certificates are read. Shared by the renewal
 * Job's convergence gate and `haptic certificates status`.
 */
import { HapticError, errorCodes } from '../errors.ts';
import { type Certificate, sha256Fingerprint } from '../pki/index.ts';
import { decodeOptionalCertificates } from '../secrets/key-pair-secret.ts';
import { identitySecretKeys, maxPreviousTrustAheadMs } from '../secrets/layout.ts';
import { namedValue, readableTimestamp } from '../secrets/secret-fields.ts';
import { certificateSerial } from '../tls/loaded-report.ts';

/** What a role's mounted identity Secret holds now, as fingerprints and serials. */
export interface ExpectedTrust {
  /** The Secret's name, for messages. */
  readonly secret: string;
  /** ca.crt. */
  readonly cas: readonly string[];
  /** previous-ca.crt while previous-ca-until lies ahead; otherwise empty. */
  readonly previousCas: readonly string[];
  /** tls.crt's own certificate serial (lower-case hex), when readable. */
  readonly leafSerial: string | undefined;
}

/** Secret data as the API returns it: base64 text per key. */
export type EncodedSecretData = Readonly<Record<string, string | undefined>>;

/** How problems name a value: as the PEM decoder names data it is given without a name. */
const certificateData = namedValue('The certificate data');

/** The certificates of one base64 data value; throws `PKI_CERTIFICATE_INVALID` when unreadable. */
function certificates(base64: string | undefined): readonly Certificate[] {
  const decoded = decodeOptionalCertificates({ value: base64 }, 'value', certificateData);
  if (decoded.state === 'present') return decoded.material;
  throw new HapticError(errorCodes.PKI_CERTIFICATE_INVALID, decoded.problem.message);
}

/** SHA-256 fingerprints (lower-case hex) of the certificates in one base64 data value. */
export function encodedFingerprints(base64: string | undefined): string[] {
  return certificates(base64).map(sha256Fingerprint);
}

/** What a Pod mounting Secret `secret` (its `data`) should report at `now`. */
export function expectedTrustOf(secret: string, data: EncodedSecretData, now: Date): ExpectedTrust {
  const until = readableTimestamp(data, identitySecretKeys.previousTrustUntil);
  const ahead = until === undefined ? 0 : until.getTime() - now.getTime();
  const [leaf] = certificates(data[identitySecretKeys.certificate]);
  return {
    secret,
    cas: encodedFingerprints(data[identitySecretKeys.trust]),
    previousCas:
      ahead > 0 && ahead <= maxPreviousTrustAheadMs
        ? encodedFingerprints(data[identitySecretKeys.previousTrust])
        : [],
    leafSerial: leaf === undefined ? undefined : certificateSerial(leaf),
  };
}
