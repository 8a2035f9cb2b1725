/**
 * `haptic preflight`: the pre-rollout Job. Reads the values files, renders the embedded chart,
 * checks its version, and runs the shared validator against live cluster state. Never writes
 * to the cluster. Exit 0 accept, 1 reject, 2 usage or environment error.
 */
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { readPackageVersion } from '../version.ts';
import type {
  Finding,
  ReleaseIo,
  RenderedObjectView,
  ValidationReport,
} from '../validation/index.ts';

interface PreflightFlags {
  readonly values?: readonly string[];
  readonly namespace: string;
  readonly release: string;
  readonly chart?: string;
  readonly expectChartVersion?: string;
  readonly kubeconfig?: string;
  readonly output: 'text' | 'json';
  readonly offline?: boolean;
}

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function kubernetesName(value: string): string {
  if (value.length > 63 || !dns1123Label.test(value)) {
    throw new InvalidArgumentError('must be a lower-case DNS-1123 label such as haptic.');
  }
  return value;
}

function repeatable(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

async function readValuesFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new HapticError(
      errorCodes.USAGE_INVALID,
      `values file ${path} cannot be read (${describeError(error)}); check the path.`,
      { cause: error },
    );
  }
}

/**
 * What to do after a rejection, on stderr (stdout stays the report, JSON included): a
 * rejected first install leaves a `failed` release that `helm install` refuses to reuse.
 */
function retryAdvice({ release, namespace }: PreflightFlags): string {
  return (
    `Fix the cause named above, then retry with helm upgrade --install ${release} <chart> -n ${namespace} (a rejected first install leaves a failed release, and helm install cannot reuse its name), ` +
    `or run helm uninstall ${release} -n ${namespace} first. GitOps: correct the values in Git; the next sync or reconciliation reruns this check.\n`
  );
}

/**
 * The lint of the release's own HAProxyTemplateConfig, started as soon as helm's output is
 * parsed, beside the live reads and the validator's rules rather than after them: its render
 * process starts a second Node, the longest step after helm. Settled, so a lint abandoned
 * because the validator rejected cannot crash the process.
 */
function startTemplateLint(
  rendering: Promise<readonly RenderedObjectView[]>,
  linting: Promise<typeof import('./template-config-lint.ts')>,
): Promise<{ readonly findings: readonly Finding[] } | { readonly error: unknown }> {
  return Promise.all([rendering, linting]).then(
    async ([objects, { lintTemplateConfigs }]) => ({
      findings: await lintTemplateConfigs(objects, new Date()),
    }),
    (error: unknown) => ({ error }),
  );
}

/** The report with the lint's findings added (the lint's environment failure thrown). */
async function withTemplateLint(
  report: ValidationReport,
  lint: ReturnType<typeof startTemplateLint>,
): Promise<ValidationReport> {
  const outcome = await lint;
  if ('error' in outcome) throw outcome.error;
  return outcome.findings.length === 0
    ? report
    : { allowed: false, findings: [...report.findings, ...outcome.findings] };
}

/** Runs the preflight and returns its exit code. */
async function runPreflight(flags: PreflightFlags): Promise<number> {
  // Modules load here, not at start-up, so other commands stay fast. Only what helm needs
  // loads before it starts (the values' parse and merge, the render); helm then renders
  // while the validator loads and runs (two cores).
  const [{ parseValues }, { mergeValueLayers }, { createReleaseIo }] = await Promise.all([
    import('../validation/parse-values.ts'),
    import('../validation/values-merge.ts'),
    import('../webhook/release-io.ts'),
  ]);
  const subject = `release ${flags.release} in namespace ${flags.namespace}`;
  const texts = await Promise.all((flags.values ?? []).map(readValuesFile));
  const layers: Record<string, unknown>[] = [];
  for (const [index, text] of texts.entries()) {
    const parsed = parseValues(text, `values file ${flags.values?.[index] ?? ''}`);
    if (!parsed.ok) {
      const { formatReport } = await import('../validation/format-report.ts');
      process.stdout.write(
        formatReport({ allowed: false, findings: [parsed.finding] }, flags.output, subject),
      );
      process.stderr.write(retryAdvice(flags));
      return 1;
    }
    layers.push({ ...parsed.values });
  }
  const values = mergeValueLayers(layers);
  const io = createReleaseIo({
    release: flags.release,
    namespace: flags.namespace,
    ...(flags.chart === undefined ? {} : { chartDir: flags.chart }),
  });
  const rendering = io.render(values);
  // The speculative render is awaited (or dropped) by the validator; never left unhandled.
  rendering.catch(() => undefined);
  // The template lint's render process (a second Node) starts while helm renders, not after.
  const renderProcess = import('../controller/template-renderer.ts').then(
    ({ startRenderProcess }) => startRenderProcess(),
  );
  renderProcess.catch(() => undefined);
  try {
    return await checkRelease(flags, { values, io, rendering, subject });
  } finally {
    // Unless the lint took it (and stopped it), on every way out: an error or a rejection.
    await renderProcess.then(
      (stop) => {
        stop();
      },
      () => undefined,
    );
  }
}

/** What the preflight has started once the values are known. */
interface Rendering {
  readonly values: Record<string, unknown>;
  readonly io: ReleaseIo;
  readonly rendering: Promise<readonly RenderedObjectView[]>;
  readonly subject: string;
}

/** Validates the release helm is rendering, with the live reads and the template lint. */
async function checkRelease(
  flags: PreflightFlags,
  { values, io, rendering, subject }: Rendering,
): Promise<number> {
  // Loaded while helm renders and while the live reads wait on the API server, not after.
  const linting = import('./template-config-lint.ts');
  const lint = startTemplateLint(rendering, linting);
  // Opened (its modules loaded, the kubeconfig read) while helm renders; its failure is the
  // same environment error as before, reported when the validator would first need it.
  const opening =
    flags.offline === true
      ? undefined
      : import('./live-reader.ts').then(({ openLiveReader }) =>
          // One HTTP/2 connection for the reads, which all come at once.
          openLiveReader(flags.kubeconfig, {
            userAgent: `haptic/${readPackageVersion()} (preflight)`,
            multiplexed: true,
          }),
        );
  opening?.catch(() => undefined);

  const [{ validateRelease }, { loadEmbeddedChart }, { readLiveState }, { formatReport }] =
    await Promise.all([
      import('../validation/validate-release.ts'),
      import('../webhook/embedded-chart.ts'),
      import('../webhook/release-io.ts'),
      import('../validation/format-report.ts'),
    ]);
  const chart = loadEmbeddedChart(flags.chart);
  const live = await opening;
  const report = await validateRelease(
    {
      release: flags.release,
      namespace: flags.namespace,
      values,
      chart,
      expectedChartVersion: flags.expectChartVersion,
      now: new Date(),
    },
    {
      render: (requested) => (requested === values ? rendering : io.render(requested)),
      ...(live === undefined ? {} : { readLive: (reads) => readLiveState(live, reads) }),
    },
  );
  const checked = report.allowed ? await withTemplateLint(report, lint) : report;
  process.stdout.write(formatReport(checked, flags.output, subject));
  if (!checked.allowed) process.stderr.write(retryAdvice(flags));
  return checked.allowed ? 0 : 1;
}

export function registerPreflightCommand(program: Command): void {
  program
    .command('preflight')
    .description(
      'validate a release before rollout: render the embedded chart with the values, check its version and the live state; exit 0 accept, 1 reject, 2 usage or environment error',
    )
    .option(
      '-f, --values <file>',
      'values file, applied in order like helm -f (repeatable)',
      repeatable,
    )
    .option('-n, --namespace <namespace>', 'namespace of the release', kubernetesName, 'haptic')
    .option('--release <name>', 'name of the release', kubernetesName, 'haptic')
    .option('--chart <dir>', 'chart directory (default: the chart embedded in this binary)')
    .addOption(
      new Option(
        '--expect-chart-version <version>',
        'chart version being installed; must equal the embedded chart',
      ).env('HAPTIC_EXPECT_CHART_VERSION'),
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: KUBECONFIG, ~/.kube/config, or in-cluster)',
    )
    .addOption(
      new Option('--output <format>', 'report format').choices(['text', 'json']).default('text'),
    )
    .option('--offline', 'skip the live checks (no cluster access); the report says so')
    .action(async (flags: PreflightFlags) => {
      try {
        process.exitCode = await runPreflight(flags);
      } catch (error) {
        process.stderr.write(`haptic preflight: ${describeError(error)}\n`);
        process.exitCode = 2;
      }
    });
}
