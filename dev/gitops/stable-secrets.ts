/**
 * "Prepare stable Secrets" of the GitOps guide, for either certificate source: the namespace,
 * the credential Secret (created only when missing), with external certificates the webhook
 * serving certificate and the default frontend certificate made with openssl, and the release
 * values exactly as the guide's jq writes them (plus the suite's image repository and Service
 * type).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { componentName } from '../../src/validation/chart-names.ts';
import type { ClusterCli } from './cluster-cli.ts';

export const releaseNamespace = 'haptic';
export const releaseName = 'haptic';
export const credentialsSecret = 'haptic-gitops-credentials';
export const webhookSecret = 'haptic-gitops-webhook';
export const frontendSecret = 'haptic-gitops-frontend';
/** The application domain of the default frontend certificate and the suite's Ingress. */
export const applicationHost = 'gitops.localdev.me';

const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A CA, and a certificate for `name` it signs (tls.crt = leaf, tls.key, ca.crt) in `dir`. */
async function issueCertificate(dir: string, name: string, caName: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const file = (base: string): string => join(dir, base);
  await execa('openssl', [
    ...['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.crt')],
    ...['-days', '7', '-subj', `/CN=${caName}`],
  ]);
  await execa('openssl', [
    ...['req', ...ec, '-keyout', file('tls.key'), '-out', file('tls.csr'), '-subj', `/CN=${name}`],
  ]);
  writeFileSync(
    file('extensions.cnf'),
    `subjectAltName=DNS:${name}\nextendedKeyUsage=serverAuth\n`,
  );
  await execa('openssl', [
    ...['x509', '-req', '-in', file('tls.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key')],
    ...[
      '-CAcreateserial',
      '-days',
      '7',
      '-out',
      file('tls.crt'),
      '-extfile',
      file('extensions.cnf'),
    ],
  ]);
}

export type CertificateSource = 'external' | 'cert-manager';

export interface StableSecrets {
  /** The release values, as the guide's jq writes them (haptic-values.json). */
  readonly values: Record<string, unknown>;
  /** The Secrets that must keep their contents across syncs and upgrades (besides the agents'). */
  readonly names: readonly string[];
}

/**
 * What every variant adds to the guide's values: the suite's image, and a NodePort Service —
 * the node has no load-balancer implementation, so a LoadBalancer Service never gets an
 * address and Argo CD reports it (so the Application) Progressing forever.
 */
function suiteValues(imageRepository: string): Record<string, unknown> {
  // Pulled on every start: each run pushes new contents under the same synthetic tags, and a
  // node kept between runs (HAPTIC_TEST_KUBECONFIG) would otherwise start the previous run's.
  return {
    image: { repository: imageRepository, pullPolicy: 'Always' },
    haproxy: { service: { type: 'NodePort' }, image: { pullPolicy: 'Always' } },
  };
}

/**
 * Creates what the guide's steps 1–3 create for `source`: the namespace and the credential
 * Secret; with external certificates also the webhook and frontend certificates (openssl) and
 * their Secrets; with cert-manager nothing more (the chart's Certificates make them).
 */
export async function prepareStableSecrets(
  cli: ClusterCli,
  dir: string,
  imageRepository: string,
  source: CertificateSource,
): Promise<StableSecrets> {
  const ns = releaseNamespace;
  await cli.kubectl(
    ['apply', '-f', '-'],
    await cli.kubectl(['create', 'namespace', ns, '--dry-run=client', '-o', 'yaml']),
  );
  const existing = await cli.kubectl([
    ...['get', 'secret', credentialsSecret, '-n', ns, '--ignore-not-found', '-o', 'name'],
  ]);
  if (existing.trim() === '') {
    const password = (await execa('openssl', ['rand', '-base64', '32'])).stdout.trim();
    await cli.kubectl([
      ...['create', 'secret', 'generic', credentialsSecret, '-n', ns],
      '--from-literal=dataplane_username=admin',
      `--from-literal=dataplane_password=${password}`,
    ]);
  }
  // The application's certificate (its Ingress carries it in both variants; with external
  // certificates it is also the default frontend certificate).
  const frontendDir = join(dir, 'frontend');
  await issueCertificate(frontendDir, applicationHost, 'lifecycle frontend CA');
  if (source === 'cert-manager') {
    return {
      values: {
        credentials: { existingSecret: credentialsSecret },
        controller: { webhook: { certManager: { enabled: true } } },
        ...suiteValues(imageRepository),
      },
      // The chart's defaults for the Secrets cert-manager writes.
      names: [
        credentialsSecret,
        componentName(releaseName, 'webhook-tls'),
        componentName(releaseName, 'default-ssl-certificate'),
      ],
    };
  }
  const webhookDir = join(dir, 'webhook');
  await issueCertificate(webhookDir, `haptic-webhook.${ns}.svc`, 'lifecycle webhook CA');
  const apply = async (args: readonly string[]): Promise<void> => {
    const manifest = await cli.kubectl([...args, '--dry-run=client', '-o', 'yaml']);
    await cli.kubectl(['apply', '-f', '-'], manifest);
  };
  await apply([
    ...['create', 'secret', 'generic', webhookSecret, '-n', ns, '--type=kubernetes.io/tls'],
    `--from-file=tls.crt=${join(webhookDir, 'tls.crt')}`,
    `--from-file=tls.key=${join(webhookDir, 'tls.key')}`,
    `--from-file=ca.crt=${join(webhookDir, 'ca.crt')}`,
  ]);
  await apply([
    ...['create', 'secret', 'tls', frontendSecret, '-n', ns],
    `--cert=${join(frontendDir, 'tls.crt')}`,
    `--key=${join(frontendDir, 'tls.key')}`,
  ]);
  return {
    values: {
      credentials: { existingSecret: credentialsSecret },
      controller: {
        webhook: {
          secretName: webhookSecret,
          caBundle: readFileSync(join(webhookDir, 'ca.crt')).toString('base64'),
          certManager: { enabled: false },
        },
      },
      defaultSSLCertificate: { secretName: frontendSecret, certManager: { enabled: false } },
      ...suiteValues(imageRepository),
    },
    names: [credentialsSecret, webhookSecret, frontendSecret],
  };
}
