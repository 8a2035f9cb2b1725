/**
 * The chart's own webhook serving certificate (controller.webhook with neither cert-manager
 * nor an external Secret): what `haptic certificates webhook` does with the Secret it finds.
 * Pure: the Secret comes in decoded, the decision goes out; webhook-certificate.ts does the I/O.
 *
 * The Secret holds a leaf for `<service>.<namespace>.svc` (tls.crt, tls.key) and the CA bundle
 * the API server trusts (ca.crt, copied into the webhook registration's caBundle). The CA's key
 * is never stored: a renewal issues a new CA and a new leaf, and keeps the previous CA in ca.crt
 * while it is valid, so the API server trusts the leaf the controller still serves until the
 * kubelet hands it the new one.
 */
import {
  type Certificate,
  chainFailureReasons,
  keyMatchesCertificate,
  verifyChain,
} from '../pki/index.ts';
import type { Decoded, KeyPairMaterial } from '../secrets/material.ts';
import { type SecretProvider, describeProvider } from '../secrets/provider-markers.ts';

/** The type of the Secret the Job writes. */
export const webhookSecretType = 'kubernetes.io/tls';

/** Validity of the CA and the leaf it issues (the API server is the only client). */
export const webhookCertificateValidityDays = 3650;
/** A certificate with less than this left is replaced at the next install or upgrade. */
export const webhookRenewBeforeDays = 365;

const dayMs = 86_400_000;

/** The Secret as found, decoded; undefined when it does not exist. */
export interface WebhookSecretView {
  /** `namespace/name`, as messages name it. */
  readonly label: string;
  readonly provider: SecretProvider;
  /** The Secret's type, which cannot change: the Job writes kubernetes.io/tls. */
  readonly type: string;
  readonly keyPair: Decoded<KeyPairMaterial>;
  readonly trust: Decoded<readonly Certificate[]>;
}

export type WebhookCertificateDecision =
  /** The Secret serves `dnsName` under its ca.crt for more than the renewal margin. */
  | { readonly action: 'keep'; readonly trust: readonly Certificate[] }
  /**
   * Issue a new CA and leaf; `previousTrust` stays in ca.crt beside the new CA: the still-valid
   * CAs of the old ca.crt and of the registration's caBundles, so that whatever certificate
   * the running controller serves (the old one, or another source's before a switch) stays
   * trusted until the new one is mounted.
   */
  | {
      readonly action: 'issue';
      readonly reason: string;
      readonly previousTrust: readonly Certificate[];
    }
  /** Not the chart's Secret: written by nobody here. */
  | { readonly action: 'refuse'; readonly message: string };

export interface WebhookCertificateInput {
  readonly secret: WebhookSecretView | undefined;
  /** `<service>.<namespace>.svc`, the name the API server calls. */
  readonly dnsName: string;
  /** The CAs each webhook of the registration trusts now (its caBundle); [] before it exists. */
  readonly registered: readonly Decoded<readonly Certificate[]>[];
  readonly now: Date;
}

/** The CAs of the bundles still valid at `now`, once each, to keep trusting while the leaf changes. */
function stillValid(
  bundles: readonly Decoded<readonly Certificate[]>[],
  now: Date,
): readonly Certificate[] {
  const valid = bundles
    .flatMap((bundle) => (bundle.state === 'present' ? bundle.material : []))
    .filter((c) => c.ca && c.notAfter.getTime() > now.getTime());
  return valid.filter((c, i) => valid.findIndex((other) => other.sha256 === c.sha256) === i);
}

export function planWebhookCertificate(input: WebhookCertificateInput): WebhookCertificateDecision {
  const { secret, dnsName, registered, now } = input;
  if (secret === undefined) {
    return {
      action: 'issue',
      reason: 'the Secret does not exist',
      previousTrust: stillValid(registered, now),
    };
  }
  if (secret.provider !== 'default') {
    return {
      action: 'refuse',
      message:
        `Secret ${secret.label} is managed by ${describeProvider(secret.provider)}, not by the chart's webhook certificate Job (label haptic.haproxy.org/certificate-provider=default), so it is left alone. ` +
        'Delete it to let the chart issue its own, or use it as an external certificate (controller.webhook.secretName with controller.webhook.caBundle).',
    };
  }
  if (secret.type !== webhookSecretType) {
    return {
      action: 'refuse',
      message:
        `Secret ${secret.label} is of type ${secret.type}, not ${webhookSecretType}, and a Secret's type cannot change. ` +
        'Delete it and run the install or upgrade again: the chart issues a new one.',
    };
  }
  const issue = (reason: string): WebhookCertificateDecision => ({
    action: 'issue',
    reason,
    previousTrust: stillValid([secret.trust, ...registered], now),
  });
  if (secret.keyPair.state !== 'present') return issue(secret.keyPair.problem.message);
  if (secret.trust.state !== 'present') return issue(secret.trust.problem.message);
  const { chain, privateKey } = secret.keyPair.material;
  if (!keyMatchesCertificate(privateKey, chain[0])) {
    return issue('its tls.key does not belong to the certificate in tls.crt');
  }
  const verification = verifyChain({
    chain,
    anchors: secret.trust.material,
    now,
    purpose: 'serverAuth',
    dnsName,
  });
  if (!verification.ok) {
    return issue(
      verification.reason === chainFailureReasons.UnknownAuthority
        ? 'its certificate is not signed by a CA of its ca.crt'
        : verification.message,
    );
  }
  const renewAt = now.getTime() + webhookRenewBeforeDays * dayMs;
  const expiring = verification.path.find((c) => c.notAfter.getTime() <= renewAt);
  if (expiring !== undefined) {
    return issue(
      `${expiring.ca ? 'its CA' : 'its certificate'} expires at ${expiring.notAfter.toISOString()}, within ${webhookRenewBeforeDays} days`,
    );
  }
  return { action: 'keep', trust: secret.trust.material };
}
