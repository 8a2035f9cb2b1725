/**
 * `haptic certificates webhook`: the chart's hook Job for the webhook serving certificate when
 * no cert-manager or external Secret is configured. Every install and upgrade runs it twice
 * (before and after the release's objects are applied), and each run is complete on its own:
 *
 * 1. Read the Secret; keep it, or issue a new CA and leaf (webhook-certificate-plan.ts).
 * 2. When the ValidatingWebhookConfiguration exists (from the second run of a first install
 *    on), set every webhook's caBundle to the Secret's ca.crt. On a renewal this happens before
 *    the Secret is written, with the old CA still in the bundle, so the API server never meets
 *    a leaf it does not trust.
 * 3. Write the Secret (create, or replace at the resourceVersion read).
 *
 * A crash between 2 and 3 leaves a bundle naming a CA no Secret holds, which is harmless; the
 * next run issues again. Nothing here is read from a value: the names come from the chart.
 */
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Secret,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { HapticError, errorCodes } from '../errors.ts';
import { apiStatus, kubeRequestError } from '../kube/api-errors.ts';
import { makeApiClient } from '../kube/api-client.ts';
import { RequestCounter } from '../kube/request-counter.ts';
import { SecretClient } from '../kube/secrets.ts';
import {
  type Certificate,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../pki/index.ts';
import { decodeKeyPair, decodeSecretCertificates } from '../secrets/key-pair-secret.ts';
import { keyPairSecretKeys } from '../secrets/layout.ts';
import {
  certificateProviderLabel,
  defaultProviderLabelValue,
  secretProvider,
} from '../secrets/provider-markers.ts';
import type { Decoded } from '../secrets/material.ts';
import { readPackageVersion } from '../version.ts';
import {
  type WebhookSecretView,
  planWebhookCertificate,
  webhookCertificateValidityDays,
  webhookSecretType,
} from './webhook-certificate-plan.ts';

/** The Secret key of the CA bundle, copied into the registration's caBundle. */
const trustKey = 'ca.crt';

export interface WebhookCertificateOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  /** The Secret the controller mounts as webhook-tls. */
  readonly secretName: string;
  /** The webhook's Service: the leaf is for `<service>.<namespace>.svc`. */
  readonly service: string;
  /** The release's ValidatingWebhookConfiguration, whose caBundles this run sets. */
  readonly webhookConfiguration: string;
  readonly now?: Date;
}

export interface WebhookCertificateOutcome {
  /** Why a new certificate was issued, or undefined when the Secret was kept. */
  readonly issued: string | undefined;
  /** Whether the registration's caBundles were written, were current, or it does not exist yet. */
  readonly caBundle: 'set' | 'current' | 'no-registration';
  /** notAfter of the leaf now in the Secret. */
  readonly notAfter: Date;
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function view(secret: V1Secret, label: string): WebhookSecretView {
  const data = secret.data ?? {};
  return {
    label,
    provider: secretProvider(secret.metadata ?? {}),
    type: secret.type ?? 'Opaque',
    keyPair: decodeKeyPair(data, `Secret ${label}`),
    trust: decodeSecretCertificates(data, trustKey, `Secret ${label}`),
  };
}

/** The release's registration; undefined before it exists (the first run of a first install). */
async function readRegistration(
  api: AdmissionregistrationV1Api,
  name: string,
): Promise<V1ValidatingWebhookConfiguration | undefined> {
  try {
    return await api.readValidatingWebhookConfiguration({ name });
  } catch (error) {
    if (apiStatus(error) === 404) return undefined;
    throw kubeRequestError(`read ValidatingWebhookConfiguration ${name}`, error);
  }
}

/** The CAs each webhook of the registration trusts (its caBundle, base64 PEM). */
function registeredTrust(
  name: string,
  registration: V1ValidatingWebhookConfiguration | undefined,
): readonly Decoded<readonly Certificate[]>[] {
  return (registration?.webhooks ?? []).flatMap((webhook) => {
    const bundle = webhook.clientConfig.caBundle ?? '';
    if (bundle === '') return [];
    const place = `ValidatingWebhookConfiguration ${name} webhook ${webhook.name}`;
    return [decodeSecretCertificates({ caBundle: bundle }, 'caBundle', place)];
  });
}

/** Sets every webhook's caBundle of `registration` (as read) to `bundle`; how it went. */
async function setCaBundles(
  api: AdmissionregistrationV1Api,
  name: string,
  registration: V1ValidatingWebhookConfiguration | undefined,
  bundle: string,
): Promise<WebhookCertificateOutcome['caBundle']> {
  if (registration === undefined) return 'no-registration';
  const webhooks = registration.webhooks ?? [];
  if (webhooks.every((webhook) => webhook.clientConfig.caBundle === bundle)) return 'current';
  for (const webhook of webhooks) webhook.clientConfig.caBundle = bundle;
  try {
    await api.replaceValidatingWebhookConfiguration({ name, body: registration });
  } catch (error) {
    if (apiStatus(error) === 409) {
      throw new HapticError(
        errorCodes.KUBE_CONFLICT,
        `ValidatingWebhookConfiguration ${name} changed while its caBundle was being set; the Job's retry sets it again.`,
        { cause: error },
      );
    }
    throw kubeRequestError(`update ValidatingWebhookConfiguration ${name}`, error);
  }
  return 'set';
}

/** Issues a CA and a leaf for `dnsName`; the Secret data with `previousTrust` kept in ca.crt. */
async function issue(
  service: string,
  dnsName: string,
  previousTrust: readonly Certificate[],
  now: Date,
): Promise<{ readonly data: Record<string, string>; readonly notAfter: Date }> {
  const ca = await issueCa({
    commonName: `${service}-ca`,
    validityDays: webhookCertificateValidityDays,
    now,
  });
  const leaf = await issueLeaf({
    role: 'webhook',
    dnsName,
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: webhookCertificateValidityDays,
    now,
  });
  const trust = [ca.certificate, ...previousTrust];
  return {
    data: {
      [keyPairSecretKeys.certificate]: base64(encodeCertificateChain([leaf.certificate])),
      [keyPairSecretKeys.privateKey]: base64(encodePrivateKey(leaf.keys.privateKey)),
      [trustKey]: base64(encodeCertificateChain(trust)),
    },
    notAfter: leaf.certificate.notAfter,
  };
}

export async function ensureWebhookCertificate(
  options: WebhookCertificateOptions,
): Promise<WebhookCertificateOutcome> {
  const now = options.now ?? new Date();
  const client = {
    counter: new RequestCounter(),
    userAgent: `haptic/${readPackageVersion()} (certificates webhook)`,
  };
  const secrets = new SecretClient(
    makeApiClient(options.kubeConfig, CoreV1Api, client),
    options.namespace,
  );
  const admission = makeApiClient(options.kubeConfig, AdmissionregistrationV1Api, client);
  const label = `${options.namespace}/${options.secretName}`;
  const dnsName = `${options.service}.${options.namespace}.svc`;
  const existing = await secrets.read(options.secretName);
  const found = existing === undefined ? undefined : view(existing, label);
  const name = options.webhookConfiguration;
  const registration = await readRegistration(admission, name);
  const decision = planWebhookCertificate({
    secret: found,
    dnsName,
    registered: registeredTrust(name, registration),
    now,
  });
  switch (decision.action) {
    case 'refuse':
      throw new HapticError(errorCodes.CERTS_REFUSED, decision.message);
    case 'keep': {
      const bundle = existing?.data?.[trustKey] ?? '';
      const caBundle = await setCaBundles(admission, name, registration, bundle);
      const leaf = found?.keyPair.state === 'present' ? found.keyPair.material.chain[0] : undefined;
      return { issued: undefined, caBundle, notAfter: leaf?.notAfter ?? now };
    }
    case 'issue': {
      const { data, notAfter } = await issue(options.service, dnsName, decision.previousTrust, now);
      const caBundle = await setCaBundles(admission, name, registration, data[trustKey] ?? '');
      if (existing === undefined) {
        await secrets.create({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: options.secretName,
            namespace: options.namespace,
            labels: { [certificateProviderLabel]: defaultProviderLabelValue },
          },
          type: webhookSecretType,
          data,
        });
      } else {
        await secrets.replace({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: existing.metadata ?? {},
          type: webhookSecretType,
          data,
        });
      }
      return { issued: decision.reason, caBundle, notAfter };
    }
  }
}
