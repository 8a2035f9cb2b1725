/**
 * The layout of the Secrets the product reads and writes: their key names and the form their
 * data arrives in. The renewal Job, the validator, the mounted-material watcher and the
 * controller's TLS Secrets all name keys from here.
 */

/**
 * Secret data as the API or a volume gives it: strings are base64, exactly as `V1Secret.data`
 * carries them; byte arrays are the decoded bytes (for example files of a projected volume).
 */
export type SecretData = Readonly<Record<string, Uint8Array | string | undefined>>;

/** Keys of a kubernetes.io/tls Secret: the certificate (leaf, then intermediates) and its key. */
export const keyPairSecretKeys = {
  certificate: 'tls.crt',
  privateKey: 'tls.key',
} as const;

/** Keys of an identity Secret (type kubernetes.io/tls). */
export const identitySecretKeys = {
  ...keyPairSecretKeys,
  trust: 'ca.crt',
  previousTrust: 'previous-ca.crt',
  previousTrustUntil: 'previous-ca-until',
} as const;

/** Keys of the default provider's issuer Secret. */
export const issuerSecretKeys = {
  ...keyPairSecretKeys,
  generation: 'generation',
  previousCa: 'previous-ca.crt',
  previousCaUntil: 'previous-ca-until',
  crossSignedCa: 'cross-signed-ca.crt',
} as const;

/** The furthest previous-ca-until may lie ahead: previous trust must end soon. @default 24 hours */
export const maxPreviousTrustAheadMs = 24 * 3_600_000;

/** The size limit of a Kubernetes Secret: no value (or mounted file) of one can be larger. */
export const maxSecretBytes = 1024 * 1024;

/** The volume that carries an identity into the controller and the agent. */
export const agentTlsVolume = 'agent-tls';
