/**
 * `haptic webhook`: the validating admission webhook alone (the same code `haptic run` serves
 * on :9443). It guards the release's agent identity and issuer Secrets and gives the
 * pre-rollout values Secret the pre-rollout Job's verdict.
 */
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import type { LiveReader } from '../webhook/index.ts';
import { type IdentityFlags, addIdentityOptions, identityOverrides } from './identity-options.ts';

interface WebhookFlags extends IdentityFlags {
  readonly listen: { readonly host: string; readonly port: number };
  readonly certDir: string;
  readonly clientCaDir?: string;
  readonly namespace: string;
  readonly release: string;
  readonly values?: readonly string[];
  readonly kubeconfig?: string;
  readonly offline?: boolean;
  readonly deadlineMs: number;
}

function listenAddress(value: string): { host: string; port: number } {
  const match = /^(.*):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (match === null || port > 65535) {
    throw new InvalidArgumentError('must be [host]:port, for example :9443 or 127.0.0.1:9443.');
  }
  const host = (match[1] ?? '').replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

function milliseconds(value: string): number {
  if (!/^\d{2,5}$/.test(value)) throw new InvalidArgumentError('must be a whole number of ms.');
  return Number(value);
}

function repeatable(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

async function serve(flags: WebhookFlags): Promise<void> {
  const webhook = await import('../webhook/index.ts');
  const { Lifecycle } = await import('../lifecycle/lifecycle.ts');
  const { createLogger } = await import('../logger.ts');
  const { stopOnSignal } = await import('../stop-on-signal.ts');
  const log = createLogger({ component: 'webhook' });

  const layers = await valuesLayers(flags);
  const chart = webhook.loadEmbeddedChart();
  const identities = webhook.releaseIdentities(
    flags.release,
    flags.namespace,
    chart,
    layers,
    identityOverrides(flags),
  );
  if (identities === undefined && flags.provider !== undefined) {
    throw new HapticError(
      errorCodes.USAGE_INVALID,
      '--provider is set, but the values select legacy Basic authentication (haproxy.agent.tls.enabled: false); pass the values of a release with agent TLS.',
    );
  }
  const live = await liveReader(flags);
  const lifecycle = new Lifecycle();
  const certificates = await lifecycle.open(
    'serving certificate',
    () =>
      webhook.watchServingCertificate({
        dir: flags.certDir,
        ...(flags.clientCaDir === undefined ? {} : { clientCaDir: flags.clientCaDir }),
        logger: log,
      }),
    {
      close: (opened) => {
        opened.close();
      },
    },
  );
  const server = await lifecycle.open(
    'webhook',
    () =>
      webhook.startWebhook(
        {
          ...(identities === undefined ? {} : { identities }),
          release: {
            name: flags.release,
            namespace: flags.namespace,
            chart,
            io: webhook.createReleaseIo({
              release: flags.release,
              namespace: flags.namespace,
              ...(live === undefined ? {} : { live }),
            }),
          },
          deadlineMs: flags.deadlineMs,
          onReview: (event) => {
            log.info(event, event.allowed ? 'admission allowed' : 'admission denied');
          },
          onHttpError: (status, message) => {
            log.warn({ status }, message);
          },
        },
        { host: flags.listen.host, port: flags.listen.port, certificates },
      ),
    { close: (opened) => opened.close() },
  );
  log.info(
    { host: server.host, port: server.port, identities, live: live !== undefined },
    'webhook serving',
  );
  await stopOnSignal(log, 'webhook', () => lifecycle.stop());
}

/** The values files (`-f`), parsed, in the order given. */
async function valuesLayers(flags: WebhookFlags): Promise<Record<string, unknown>[]> {
  const { parseValues } = await import('../validation/parse-values.ts');
  const layers: Record<string, unknown>[] = [];
  for (const path of flags.values ?? []) {
    const parsed = parseValues(await readFile(path, 'utf8'), `values file ${path}`);
    if (!parsed.ok) throw new HapticError(errorCodes.USAGE_INVALID, parsed.finding.message);
    layers.push({ ...parsed.values });
  }
  return layers;
}

/** The live reads of the values Secret's checks, unless `--offline`. */
async function liveReader(flags: WebhookFlags): Promise<LiveReader | undefined> {
  if (flags.offline === true) return undefined;
  const { openLiveReader } = await import('./live-reader.ts');
  const { readPackageVersion } = await import('../version.ts');
  return openLiveReader(flags.kubeconfig, {
    userAgent: `haptic/${readPackageVersion()} (webhook)`,
  });
}

export function registerWebhookCommand(program: Command): void {
  addIdentityOptions(program.command('webhook'))
    .description(
      "serve the validating admission webhook alone (POST /validate over HTTPS): the release's agent identity and issuer Secrets, and its pre-rollout values Secret",
    )
    .addOption(
      new Option('--listen <[host]:port>', 'address to listen on')
        .argParser(listenAddress)
        .default(listenAddress(':9443'), ':9443'),
    )
    .option(
      '--cert-dir <dir>',
      'directory with the serving tls.crt and tls.key',
      '/etc/haptic/webhook-tls',
    )
    .option(
      '--client-ca-dir <dir>',
      "directory whose ca.crt holds the CAs of the API server's webhook client certificate; with it every caller without one is refused (TLS handshake)",
    )
    .option('-n, --namespace <namespace>', 'namespace of the release', 'haptic')
    .option('--release <name>', 'name of the release', 'haptic')
    .option(
      '-f, --values <file>',
      "the release's values, to derive Secret names and peer names (repeatable)",
      repeatable,
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, or in-cluster)',
    )
    .option('--offline', 'validate the values Secret without live checks')
    .option(
      '--deadline-ms <ms>',
      'time a review may take before it is answered 504',
      milliseconds,
      4000,
    )
    .action(async (flags: WebhookFlags) => {
      try {
        await serve(flags);
      } catch (error) {
        process.stderr.write(`haptic webhook: ${describeError(error)}\n`);
        process.exitCode = 2;
      }
    });
}
