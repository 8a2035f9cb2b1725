/**
 * The release against the cluster as it is: Secrets that other providers own, the credential
 * Secret's keys, externally supplied identities and certificates, and the identity Secrets the
 * running workloads mount today.
 */
import { chainFailureReasons, verifyChain, type Certificate } from '../pki/index.ts';
import { keyBelongsTo } from './certificate-memo.ts';
import { validationCodes } from './codes.ts';
import { type Finding, error, secretPath, warning } from './finding.ts';
import { type IdentitySubject, checkIdentity, roleNames } from './identity-rules.ts';
import { type PlannedSecret, type ReleasePlan, plannedSecret } from './release-plan.ts';
import type { ReleaseValues } from './release-values.ts';
import { providerTakeoverByRelease } from './provider-rules.ts';
import { identitySecretKeys } from '../secrets/layout.ts';
import type { KeyPairMaterial } from '../secrets/material.ts';
import { type SecretObject, secretLabel } from './secret-data.ts';
import { decodeCertificateBundle, decodeSecretCertificates } from '../secrets/key-pair-secret.ts';
import { readableBytes } from '../secrets/secret-fields.ts';
import type { SecretDecoder } from '../secrets/secret-decoder.ts';
import { checkTrust } from './trust-rules.ts';

/** What the pre-rollout Job (or the webhook) read from the cluster. */
export interface LiveState {
  /** The Secrets of the plan that exist, by name; a name not in the map does not exist. */
  readonly secrets: ReadonlyMap<string, SecretObject>;
  /** Identity Secrets the running Deployments mount as agent-tls, when they exist. */
  readonly mounted: { readonly server?: string; readonly client?: string };
}

export interface LiveSubject {
  readonly plan: ReleasePlan;
  readonly values: ReleaseValues;
  readonly live: LiveState;
  readonly now: Date;
  readonly decoder: SecretDecoder;
}

const credentialKeys = ['dataplane_username', 'dataplane_password'] as const;

function label(plan: ReleasePlan, name: string): string {
  return `${plan.namespace}/${name}`;
}

function missing(plan: ReleasePlan, planned: PlannedSecret, what: string): Finding {
  return error(
    validationCodes.SecretMissing,
    planned.source,
    `${planned.source} names Secret ${label(plan, planned.name)}, which does not exist: create it with ${what} before installing or upgrading, or correct the name.`,
  );
}

function credentialFindings({ plan, live }: LiveSubject): Finding[] {
  const planned = plannedSecret(plan, 'credentials');
  if (planned === undefined) return [];
  const secret = live.secrets.get(planned.name);
  if (secret === undefined) {
    return [
      error(
        validationCodes.CredentialsSecretMissing,
        planned.source,
        `credentials.existingSecret names Secret ${label(plan, planned.name)}, which does not exist: create it with the keys dataplane_username and dataplane_password, or correct the name.`,
      ),
    ];
  }
  const absent = credentialKeys.filter((key) => {
    const bytes = readableBytes(secret.data, key);
    return bytes === undefined || bytes.byteLength === 0;
  });
  return absent.length === 0
    ? []
    : [
        error(
          validationCodes.CredentialsSecretIncomplete,
          secretPath(planned.name, absent[0]),
          `Secret ${secretLabel(secret)} (credentials.existingSecret) has no ${absent.join(' and ')}: it must provide dataplane_username and dataplane_password.`,
        ),
      ];
}

/** An external identity Secret of the release as found: absent, or decoded (maybe unusable). */
function foundIdentity(subject: LiveSubject, role: 'server' | 'client') {
  const { plan, live, decoder } = subject;
  const planned = plannedSecret(plan, role);
  if (plan.agentProvider !== 'external' || planned === undefined) return undefined;
  const secret = live.secrets.get(planned.name);
  const state =
    secret === undefined
      ? undefined
      : decoder.identity(secret.data, `Secret ${secretLabel(secret)}`);
  return { planned, secret, state };
}

function externalIdentityFindings(subject: LiveSubject, role: 'server' | 'client'): Finding[] {
  const { plan, now } = subject;
  const found = foundIdentity(subject, role);
  if (found === undefined) return [];
  const { planned, secret, state } = found;
  if (secret === undefined || state === undefined) {
    return [missing(plan, planned, `the ${roleNames[role]} identity (tls.crt, tls.key, ca.crt)`)];
  }
  const secretName = secretLabel(secret);
  const identity: IdentitySubject = {
    name: secret.name,
    label: secretName,
    role,
    peerName: plan.peerNames[role],
    state,
    now,
  };
  const problem = checkIdentity(identity);
  const material = problem === undefined ? [] : [problem];
  if (state.state !== 'present') return material;
  const peer = foundIdentity(subject, role === 'server' ? 'client' : 'server')?.state;
  return [
    ...material,
    ...checkTrust({
      name: secret.name,
      label: secretName,
      old: undefined,
      next: state.material,
      ...(peer?.state === 'present' ? { peer: peer.material } : {}),
      mode: 'live',
      now,
    }),
  ];
}

/** The key-pair Secret's tls.key does not belong to its tls.crt, or nothing. */
function servingKeyMismatch(
  name: string,
  secret: SecretObject,
  material: KeyPairMaterial,
  what: string,
): Finding | undefined {
  return keyBelongsTo(material, material.chain[0])
    ? undefined
    : error(
        validationCodes.KeyMismatch,
        secretPath(name, 'tls.key'),
        `tls.key of Secret ${secretLabel(secret)} does not belong to the ${what} in tls.crt: update tls.crt and tls.key together, from the same issuance.`,
      );
}

/** The Secret's own ca.crt, when it holds certificates. */
function ownTrust(secret: SecretObject): readonly Certificate[] | undefined {
  const key = identitySecretKeys.trust;
  const decoded = decodeSecretCertificates(secret.data, key, `Secret ${secretLabel(secret)}`);
  return decoded.state === 'present' ? decoded.material : undefined;
}

/**
 * Why the webhook certificate cannot be verified by the API server: caBundle is the trust the
 * API server uses, so a certificate its own Secret's ca.crt verifies points at caBundle.
 */
function webhookChainFinding(
  subject: LiveSubject,
  secret: SecretObject,
  material: KeyPairMaterial,
  anchors: readonly Certificate[],
): Finding | undefined {
  const { plan, now } = subject;
  const dnsName = `${plan.webhookService}.${plan.namespace}.svc`;
  const result = verifyChain({ chain: material.chain, anchors, now, dnsName });
  if (result.ok) return undefined;
  const name = secretLabel(secret);
  if (result.reason === chainFailureReasons.UnknownAuthority) {
    const own = ownTrust(secret);
    const byOwn =
      own === undefined
        ? undefined
        : verifyChain({ chain: material.chain, anchors: own, now, dnsName });
    if (byOwn?.ok === true) {
      return error(
        validationCodes.WebhookCaBundleMismatch,
        'controller.webhook.caBundle',
        `controller.webhook.caBundle does not hold the CA that issued the webhook certificate in Secret ${name} (issuer ${material.chain[0].issuer}), so the API server would refuse the webhook's TLS. ` +
          `Set controller.webhook.caBundle to that Secret's ca.crt as base64: kubectl get secret ${secret.name} -n ${secret.namespace} -o jsonpath='{.data.ca\\.crt}'.`,
      );
    }
    return error(
      validationCodes.WebhookCertificateInvalid,
      secretPath(secret.name, 'tls.crt'),
      `The webhook certificate in Secret ${name} (issuer ${material.chain[0].issuer}) is not signed by a CA in controller.webhook.caBundle: reissue it from the CA in caBundle, or set caBundle to the base64 PEM of the CA that issued it.`,
    );
  }
  return error(
    validationCodes.WebhookCertificateInvalid,
    secretPath(secret.name, 'tls.crt'),
    `The webhook certificate in Secret ${name} cannot serve ${dnsName} under controller.webhook.caBundle: ${result.message} Update the Secret, or caBundle, so they match.`,
  );
}

function webhookFindings(subject: LiveSubject): Finding[] {
  const { plan, values, live, decoder } = subject;
  const planned = plannedSecret(plan, 'webhook');
  if (plan.webhookSource !== 'external' || planned === undefined) return [];
  const secret = live.secrets.get(planned.name);
  if (secret === undefined)
    return [missing(plan, planned, 'the webhook certificate (tls.crt, tls.key)')];
  const decoded = decoder.keyPair(secret.data, `Secret ${secretLabel(secret)}`);
  if (decoded.state === 'unparsable') {
    return [
      error(
        validationCodes.WebhookCertificateInvalid,
        secretPath(planned.name, decoded.problem.key),
        `The webhook certificate in Secret ${secretLabel(secret)} cannot be read: ${decoded.problem.message} Store the certificate (leaf, then intermediates) in tls.crt and its key in tls.key, both PEM.`,
      ),
    ];
  }
  const material = decoded.material;
  const mismatch = servingKeyMismatch(planned.name, secret, material, 'webhook certificate');
  if (mismatch !== undefined) return [mismatch];
  // An unreadable caBundle is the values rules' finding (WebhookCaBundleInvalid).
  const anchors = decodeCertificateBundle(values.webhook.caBundle, 'controller.webhook.caBundle');
  if (anchors.state === 'unparsable') return [];
  const found = webhookChainFinding(subject, secret, material, anchors.material);
  return found === undefined ? [] : [found];
}

function frontendFindings({ plan, live, decoder }: LiveSubject): Finding[] {
  const planned = plannedSecret(plan, 'default-ssl');
  if (planned === undefined || planned.provider !== 'external') return [];
  const secret = live.secrets.get(planned.name);
  if (secret === undefined)
    return [missing(plan, planned, 'the frontend certificate (tls.crt, tls.key)')];
  const decoded = decoder.keyPair(secret.data, `Secret ${secretLabel(secret)}`);
  if (decoded.state === 'unparsable') {
    return [
      error(
        validationCodes.SecretUnparsable,
        secretPath(planned.name, decoded.problem.key),
        `${decoded.problem.message} Replace the default frontend certificate with a PEM tls.crt (leaf, then intermediates) and its tls.key.`,
      ),
    ];
  }
  const mismatch = servingKeyMismatch(
    planned.name,
    secret,
    decoded.material,
    'default frontend certificate',
  );
  return mismatch === undefined ? [] : [mismatch];
}

function takeoverFindings({ plan, live }: LiveSubject): Finding[] {
  return plan.secrets.flatMap((planned) => {
    const secret = live.secrets.get(planned.name);
    return secret === undefined ? [] : (providerTakeoverByRelease(planned, secret) ?? []);
  });
}

function switchWarnings({ plan, live }: LiveSubject): Finding[] {
  return (['server', 'client'] as const).flatMap((role) => {
    const mounted = live.mounted[role];
    const planned = plannedSecret(plan, role);
    if (mounted === undefined || planned === undefined || mounted === planned.name) return [];
    const deployment = role === 'server' ? plan.haproxyDeployment : plan.controllerDeployment;
    return [
      warning(
        validationCodes.IdentitySecretsSwitched,
        planned.source,
        `${deployment} switches its ${roleNames[role]} identity from Secret ${mounted} to ${planned.name}: expect a rollout of haptic-controller and haptic-haproxy, and keep ${mounted} until both are ready.`,
      ),
    ];
  });
}

/** Every live finding: takeovers first, then missing or unusable material, then warnings. */
export function checkLiveState(subject: LiveSubject): Finding[] {
  return [
    ...takeoverFindings(subject),
    ...credentialFindings(subject),
    ...externalIdentityFindings(subject, 'server'),
    ...externalIdentityFindings(subject, 'client'),
    ...webhookFindings(subject),
    ...frontendFindings(subject),
    ...switchWarnings(subject),
  ];
}
