/**
 * The Secrets the controller's informer lists and watches: those of type kubernetes.io/tls
 * (Ingress certificates, the default certificate) without the label
 * `haptic.haproxy.org/certificate-authority`. cert-manager keeps a CA Certificate's private
 * key in a kubernetes.io/tls Secret; the chart labels its CA Certificates' Secrets (agent
 * issuer with certManager.createIssuer, webhook CA) through `secretTemplate`, so no CA key
 * reaches the informer's cache. The default provider's issuer Secret is Opaque: never listed.
 * An Ingress naming a labelled Secret finds no TLS Secret, as if it did not exist.
 */
export const certificateAuthorityLabel = 'haptic.haproxy.org/certificate-authority';

/** Selectors of the Secret list and watch. */
export const watchedSecretSelectors = {
  fieldSelector: 'type=kubernetes.io/tls',
  labelSelector: `!${certificateAuthorityLabel}`,
} as const;
