/**
 * A Secret write exactly as cert-manager v1.21 makes it when it issues or renews a Certificate
 * (pkg/controller/certificates/issuing/internal/secret.go, SecretsManager.UpdateData): a
 * server-side apply, forced, by the field manager `cert-manager-certificates-issuing` (its user
 * agent's prefix), of type kubernetes.io/tls with tls.crt (the leaf, then any issuer that is not
 * a self-signed root), tls.key, ca.crt (the root of the chain), the annotations
 * cert-manager.io/common-name, alt-names, ip-sans, uri-sans (kept when empty), certificate-name,
 * issuer-name, issuer-kind and issuer-group, the label controller.cert-manager.io/fao=true and
 * the Certificate's secretTemplate labels.
 */
import { type CryptoKeyPair, encodePrivateKey, type Certificate } from '../../src/pki/index.ts';
import { b64, pem } from '../unit/validation/material.ts';
import { type CommandResult, kubectl } from './cluster.ts';

export const certManagerFieldManager = 'cert-manager-certificates-issuing';

export interface CertManagerIssue {
  readonly secret: string;
  readonly certificateName: string;
  readonly issuer: { readonly name: string; readonly kind: 'Issuer' | 'ClusterIssuer' };
  /** tls.crt: the leaf, then any non-root issuers. */
  readonly chain: readonly Certificate[];
  readonly keys: CryptoKeyPair;
  /** ca.crt: the root of the chain. */
  readonly ca: Certificate;
  readonly dnsNames?: readonly string[];
  readonly templateLabels?: Readonly<Record<string, string>>;
}

/** The apply configuration cert-manager sends for `issued` in `namespace`. */
export function certManagerApplyConfiguration(
  namespace: string,
  issued: CertManagerIssue,
): Record<string, unknown> {
  const commonName = /CN=([^,]+)/.exec(issued.chain[0]?.subject ?? '')?.[1] ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: issued.secret,
      namespace,
      annotations: {
        'cert-manager.io/common-name': commonName,
        'cert-manager.io/alt-names': (issued.dnsNames ?? []).join(','),
        'cert-manager.io/ip-sans': '',
        'cert-manager.io/uri-sans': '',
        'cert-manager.io/certificate-name': issued.certificateName,
        'cert-manager.io/issuer-name': issued.issuer.name,
        'cert-manager.io/issuer-kind': issued.issuer.kind,
        'cert-manager.io/issuer-group': 'cert-manager.io',
      },
      labels: { ...issued.templateLabels, 'controller.cert-manager.io/fao': 'true' },
    },
    data: {
      'tls.key': b64(encodePrivateKey(issued.keys.privateKey)),
      'tls.crt': b64(pem(...issued.chain)),
      'ca.crt': b64(pem(issued.ca)),
    },
    type: 'kubernetes.io/tls',
  };
}

/** Writes `issued` into the cluster as cert-manager does; never throws on exit codes. */
export function applyAsCertManager(
  namespace: string,
  issued: CertManagerIssue,
): Promise<CommandResult> {
  return kubectl(
    [
      'apply',
      '--server-side',
      `--field-manager=${certManagerFieldManager}`,
      '--force-conflicts',
      '-f',
      '-',
    ],
    JSON.stringify(certManagerApplyConfiguration(namespace, issued)),
  );
}
