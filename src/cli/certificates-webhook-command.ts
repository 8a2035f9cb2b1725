/** `haptic certificates webhook`: commander wiring only (see certs/webhook-certificate.ts). */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { describeError } from '../errors.ts';

interface WebhookFlags {
  readonly namespace: string;
  readonly secret: string;
  readonly service: string;
  readonly webhookConfiguration: string;
  readonly kubeconfig?: string;
}

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function name(pattern: RegExp, max: number, example: string) {
  return (value: string): string => {
    if (value.length > max || !pattern.test(value)) {
      throw new InvalidArgumentError(`must be a lower-case DNS-1123 name such as ${example}.`);
    }
    return value;
  };
}

/** Adds `certificates webhook` under `certificates`. */
export function addWebhook(certificates: Command): void {
  certificates
    .command('webhook')
    .description(
      "the chart's webhook serving certificate (its hook Job): keep the Secret, or issue a CA and a certificate for <service>.<namespace>.svc into it, and set the webhook registration's caBundle to its ca.crt",
    )
    .addOption(
      new Option('-n, --namespace <namespace>', 'namespace of the Secret and the Service')
        .argParser(name(dns1123Label, 63, 'haptic'))
        .default('haptic'),
    )
    .requiredOption(
      '--secret <name>',
      'the Secret the controller mounts as webhook-tls',
      name(dns1123Subdomain, 253, 'haptic-webhook-default-tls'),
    )
    .requiredOption(
      '--service <name>',
      "the webhook's Service",
      name(dns1123Label, 63, 'haptic-webhook'),
    )
    .requiredOption(
      '--webhook-configuration <name>',
      'the ValidatingWebhookConfiguration whose caBundles to set (skipped while it does not exist)',
      name(dns1123Subdomain, 253, 'haptic-haptic-webhook'),
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    )
    .action(async (flags: WebhookFlags) => {
      const [{ ensureWebhookCertificate }, { loadKubeConfig }, { createLogger }] =
        await Promise.all([
          import('../certs/webhook-certificate.ts'),
          import('../kube/kube-config.ts'),
          import('../logger.ts'),
        ]);
      const logger = createLogger({ component: 'certificates webhook', sync: true });
      try {
        const outcome = await ensureWebhookCertificate({
          kubeConfig: loadKubeConfig(flags.kubeconfig),
          namespace: flags.namespace,
          secretName: flags.secret,
          service: flags.service,
          webhookConfiguration: flags.webhookConfiguration,
        });
        const secret = `${flags.namespace}/${flags.secret}`;
        logger.info(
          {
            event: outcome.issued === undefined ? 'kept' : 'issued',
            secret,
            notAfter: outcome.notAfter.toISOString(),
            caBundle: outcome.caBundle,
          },
          outcome.issued === undefined
            ? `Kept the webhook certificate in Secret ${secret} (valid until ${outcome.notAfter.toISOString()}).`
            : `Issued a webhook certificate into Secret ${secret} (valid until ${outcome.notAfter.toISOString()}): ${outcome.issued}.`,
        );
        logger.info(
          {
            event: `ca-bundle-${outcome.caBundle}`,
            webhookConfiguration: flags.webhookConfiguration,
          },
          {
            set: `Set the caBundle of ValidatingWebhookConfiguration ${flags.webhookConfiguration}.`,
            current: `The caBundle of ValidatingWebhookConfiguration ${flags.webhookConfiguration} is current.`,
            'no-registration': `ValidatingWebhookConfiguration ${flags.webhookConfiguration} does not exist yet; the run after the release's objects sets its caBundle.`,
          }[outcome.caBundle],
        );
      } catch (error) {
        process.stderr.write(`haptic certificates webhook: ${describeError(error)}\n`);
        process.exitCode = 1;
      }
    });
}
