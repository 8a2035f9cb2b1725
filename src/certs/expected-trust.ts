/**
 * What a Pod mounting an identity Secret should have loaded, as the convergence view compares
 * it: fingerprints of `ca.crt`, of `previous-ca.crt` while `previous-ca-until` lies ahead (and
 * no more than the accepted 24 hours), and the serial of the certificate in `tls.crt`. Pure:
 * the Secret's data and `now` in. Only public certificates are read. Shared by the renewal
 * Job's convergence gate and `haptic certificates status`.
 */
import { decodeCertificateChain, sha256Fingerprint, type Certificate } from '../pki/index.ts';
import { identitySecretKeys, maxPreviousTrustAheadMs } from '../secrets/layout.ts';
import { parseUtcTimestamp } from '../secrets/utc-timestamp.ts';
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

function certificates(base64: string | undefined): readonly Certificate[] {
  if (base64 === undefined || base64 === '') return [];
  return decodeCertificateChain(Buffer.from(base64, 'base64'));
}

/** SHA-256 fingerprints (lower-case hex) of the certificates in one base64 data value. */
export function encodedFingerprints(base64: string | undefined): string[] {
  return certificates(base64).map(sha256Fingerprint);
}

/** What a Pod mounting Secret `secret` (its `data`) should report at `now`. */
export function expectedTrustOf(secret: string, data: EncodedSecretData, now: Date): ExpectedTrust {
  const until = parseUtcTimestamp(
    Buffer.from(data[identitySecretKeys.previousTrustUntil] ?? '', 'base64').toString('utf8'),
  );
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
