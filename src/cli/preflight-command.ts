/**
 * `haptic preflight`: the pre-rollout Job. Reads the values files, renders the embedded chart,
 * checks its version, and runs the shared validator against live cluster state. Never writes
 * to the cluster. Exit 0 accept, 1 reject, 2 usage or environment error.
 */
import { readFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { templateConfigKind } from '../api/template-config.ts';
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

/** A lint of the release's HAProxyTemplateConfigs: the configs it linted, and its outcome. */
interface LintOutcome {
  readonly configs: readonly RenderedObjectView[];
  readonly outcome: { readonly findings: readonly Finding[] } | { readonly error: unknown };
}

/** The lint of these configs; settled, so a lint nobody awaits cannot crash the process. */
function lint(
  configs: readonly RenderedObjectView[],
  linting: Promise<typeof import('./template-config-lint.ts')>,
): Promise<LintOutcome> {
  return linting
    .then(async ({ lintTemplateConfigs }) => ({
      findings: await lintTemplateConfigs(configs, new Date()),
    }))
    .catch((error: unknown) => ({ error }))
    .then((outcome) => ({ configs, outcome }));
}

/**
 * The lint of the release's own HAProxyTemplateConfig, started as soon as helm has answered,
 * with the config parsed from its own document while the whole output is parsed: its render
 * process (a second Node) renders beside the parse, the validator's rules and the live reads
 * rather than after them. A config that cannot be parsed on its own waits for the whole parse.
 */
function startTemplateLint(
  configs: Promise<readonly RenderedObjectView[]>,
  linting: Promise<typeof import('./template-config-lint.ts')>,
): Promise<LintOutcome | undefined> {
  return configs.then(
    (parsed) => lint(parsed, linting),
    () => undefined,
  );
}

/**
 * The report with the lint's findings added (the lint's environment failure thrown). The lint
 * counts only if it linted the configs of the whole output; otherwise they are linted now.
 */
async function withTemplateLint(
  report: ValidationReport,
  early: ReturnType<typeof startTemplateLint>,
  objects: readonly RenderedObjectView[],
  linting: Promise<typeof import('./template-config-lint.ts')>,
): Promise<ValidationReport> {
  const configs = objects.filter((object) => object.kind === templateConfigKind);
  const started = await early;
  const { outcome } =
    started !== undefined && sameConfigs(started.configs, configs)
      ? started
      : await lint(configs, linting);
  if ('error' in outcome) throw outcome.error;
  return outcome.findings.length === 0
    ? report
    : { allowed: false, findings: [...report.findings, ...outcome.findings] };
}

function sameConfigs(
  linted: readonly RenderedObjectView[],
  rendered: readonly RenderedObjectView[],
): boolean {
  return isDeepStrictEqual(
    linted.map((config) => config.body),
    rendered.map((config) => config.body),
  );
}

/** Runs the preflight and returns its exit code. */
async function runPreflight(flags: PreflightFlags): Promise<number> {
  // Modules load here, not at start-up, so other commands stay fast. helm starts first, before
  // the values are read and before the YAML parser loads: its own start-up is about half its
  // run, and it reads the values (on stdin) only after it. The validator then loads and runs
  // while helm renders (two cores).
  const { startReleaseRender } = await import('../webhook/release-render.ts');
  const ioOptions = {
    release: flags.release,
    namespace: flags.namespace,
    ...(flags.chart === undefined ? {} : { chartDir: flags.chart }),
  };
  const helm = startReleaseRender(ioOptions);
  // The template lint's render process (a second Node) starts next, to be up when helm ends.
  const renderProcess = import('../controller/render/spare-render-process.ts').then(
    ({ startRenderProcess }) => startRenderProcess(),
  );
  renderProcess.catch(() => undefined);
  // The parser of helm's output loads while the values are read.
  const parsing = Promise.all([
    import('../webhook/release-io.ts'),
    import('../render/manifest.ts'),
  ]);
  parsing.catch(() => undefined);
  try {
    const values = await readValues(flags);
    if (!('values' in values)) {
      const { formatReport } = await import('../validation/format-report.ts');
      process.stdout.write(formatReport(values.rejected, flags.output, subjectOf(flags)));
      process.stderr.write(retryAdvice(flags));
      return 1;
    }
    const [{ createReleaseIo }, { documentsOfKind, parseManifest }] = await parsing;
    const manifest = helm.output(values.values);
    // The configs first, each from its own document, for the lint; the whole output a turn of
    // the event loop later, once the lint has sent its render request (a parse of helm's whole
    // output holds the thread for 25-35 ms).
    const templateConfigs = manifest.then((text) => documentsOfKind(text, templateConfigKind));
    const rendering = manifest.then(async (text) => {
      await nextTurn();
      return parseManifest(text);
    });
    // The speculative render is awaited (or dropped) by the validator; never left unhandled.
    rendering.catch(() => undefined);
    return await checkRelease(flags, {
      values: values.values,
      io: createReleaseIo(ioOptions),
      templateConfigs,
      rendering,
      subject: subjectOf(flags),
    });
  } finally {
    // helm too, when the validator rejected before it ended (nothing happens to an ended one).
    helm.abandon();
    // Unless the lint took it (and stopped it), on every way out: an error or a rejection.
    await renderProcess.then(
      (stop) => {
        stop();
      },
      () => undefined,
    );
  }
}

function subjectOf({ release, namespace }: PreflightFlags): string {
  return `release ${release} in namespace ${namespace}`;
}

/** The values files read, parsed and merged in order, or the report rejecting one. */
async function readValues(
  flags: PreflightFlags,
): Promise<{ readonly values: Record<string, unknown> } | { readonly rejected: ValidationReport }> {
  const [{ parseValues }, { mergeValueLayers }] = await Promise.all([
    import('../validation/parse-values.ts'),
    import('../validation/values-merge.ts'),
  ]);
  const texts = await Promise.all((flags.values ?? []).map(readValuesFile));
  const layers: Record<string, unknown>[] = [];
  for (const [index, text] of texts.entries()) {
    const parsed = parseValues(text, `values file ${flags.values?.[index] ?? ''}`);
    if (!parsed.ok) return { rejected: { allowed: false, findings: [parsed.finding] } };
    layers.push({ ...parsed.values });
  }
  return { values: mergeValueLayers(layers) };
}

/** What the preflight has started once the values are known. */
interface Rendering {
  readonly values: Record<string, unknown>;
  readonly io: ReleaseIo;
  /** The HAProxyTemplateConfigs, each parsed from its own document of helm's output. */
  readonly templateConfigs: Promise<readonly RenderedObjectView[]>;
  readonly rendering: Promise<readonly RenderedObjectView[]>;
  readonly subject: string;
}

/** Validates the release helm is rendering, with the live reads and the template lint. */
async function checkRelease(
  flags: PreflightFlags,
  { values, io, templateConfigs, rendering, subject }: Rendering,
): Promise<number> {
  // Loaded while helm renders and while the live reads wait on the API server, not after.
  const linting = import('./template-config-lint.ts');
  const early = startTemplateLint(templateConfigs, linting);
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
  const checked = report.allowed
    ? await withTemplateLint(report, early, await rendering, linting)
    : report;
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
