/**
 * One `helm template` process: its arguments, its Go runtime, its output or the error its
 * failure means. Apart from render-chart.ts (which parses the output) so that a caller can
 * start helm before the YAML parser has loaded: `haptic preflight` starts helm first.
 */
import { spawn } from 'node:child_process';
import { HapticError, errorCodes } from '../errors.ts';
import { embeddedChartDir } from './chart-dir.ts';
import { describeHelmFailure } from './helm-failure.ts';

export interface RenderChartOptions {
  /**
   * Helm release name.
   * @default 'haptic'
   */
  readonly release?: string;
  /**
   * Release namespace.
   * @default 'haptic'
   */
  readonly namespace?: string;
  /**
   * Values files, applied in order like `helm -f`.
   * @default []
   */
  readonly valuesFiles?: readonly string[];
  /** Values applied after the files (given to helm on stdin as JSON). */
  readonly values?: Readonly<Record<string, unknown>>;
  /**
   * Chart directory.
   * @default the embedded chart (`<package>/chart`)
   */
  readonly chartDir?: string;
  /**
   * The helm binary (v3 or v4).
   * @default process.env.HELM_BIN, else `helm` from PATH
   */
  readonly helmBin?: string;
  /**
   * Also render the chart's crds/ directory.
   * @default false
   */
  readonly includeCrds?: boolean;
  /**
   * How long helm may take.
   * @default 60_000
   */
  readonly timeoutMs?: number;
}

const defaultTimeoutMs = 60_000;

function helmArguments(
  options: Omit<RenderChartOptions, 'values'>,
  release: string,
  namespace: string,
  valuesOnStdin: boolean,
): string[] {
  const args = [
    'template',
    release,
    options.chartDir ?? embeddedChartDir(),
    '--namespace',
    namespace,
  ];
  if (options.includeCrds === true) args.push('--include-crds');
  for (const file of options.valuesFiles ?? []) args.push('--values', file);
  if (valuesOnStdin) args.push('--values', '-');
  return args;
}

/** How a helm run ended. */
type HelmRun =
  | {
      readonly kind: 'exited';
      readonly code: number;
      readonly stdout: string;
      readonly stderr: string;
    }
  | { readonly kind: 'unstarted'; readonly reason: string }
  | { readonly kind: 'killed'; readonly signal: string }
  | { readonly kind: 'timedOut' };

/** A started helm: its stdin open until `send`, its run settled when it ends. */
export interface HelmProcess {
  readonly run: Promise<HelmRun>;
  /** Writes `input` (or nothing) to helm's stdin and closes it. */
  send(input: string | undefined): void;
  kill(): void;
}

/**
 * helm's Go runtime for one short render (every render: preflight's, the webhook's, the
 * controller's): no garbage collection until its heap nears 48 MiB (a render of the chart
 * stays below it; large values get collections from there on) and one thread running Go code,
 * so helm leaves the other core to the process that waits for it. About 30 % less CPU for
 * helm and 6-13 MB more memory (the Jobs' limit is 256 MiB). The three go together: an
 * environment that sets any of them gets none of these (GOGC=off needs its GOMEMLIMIT).
 */
const helmRuntime: Readonly<Record<string, string>> = {
  GOGC: 'off',
  GOMEMLIMIT: '48MiB',
  GOMAXPROCS: '1',
};

function helmEnvironment(): NodeJS.ProcessEnv {
  const own = Object.keys(helmRuntime).some((name) => process.env[name] !== undefined);
  return own ? process.env : { ...process.env, ...helmRuntime };
}

/**
 * Starts helm, collecting its output as UTF-8 text, byte for byte. node:child_process rather
 * than execa: execa's hundred modules cost the preflight's start-up more than helm's whole run.
 */
function spawnHelm(helmBin: string, args: readonly string[], timeoutMs: number): HelmProcess {
  const child = spawn(helmBin, args, { env: helmEnvironment() });
  // Counted from the values on: a helm started before them waits for the caller, not for itself.
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  let ended = false;
  const run = new Promise<HelmRun>((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      ended = true;
      clearTimeout(timer);
      resolve({ kind: 'unstarted', reason: error.code ?? error.message });
    });
    child.on('close', (code, signal) => {
      ended = true;
      clearTimeout(timer);
      if (timedOut) resolve({ kind: 'timedOut' });
      else if (code === null) resolve({ kind: 'killed', signal: signal ?? 'a signal' });
      else {
        resolve({
          kind: 'exited',
          code,
          stdout: Buffer.concat(stdout).toString('utf8'),
          stderr: Buffer.concat(stderr).toString('utf8'),
        });
      }
    });
  });
  // A helm that exits before reading all of stdin closes the pipe; its exit status says why.
  child.stdin.on('error', () => undefined);
  return {
    run,
    send: (input) => {
      if (!ended) {
        timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, timeoutMs);
      }
      child.stdin.end(input);
    },
    kill: () => child.kill('SIGKILL'),
  };
}

/** helm's output (the manifest) from its run, or the HapticError its failure means. */
function helmOutput(run: HelmRun, helmBin: string, timeout: number, release: string): string {
  switch (run.kind) {
    case 'timedOut':
      throw new HapticError(
        errorCodes.TOOL_FAILED,
        `${helmBin} template did not finish within ${timeout} ms; check the helm binary.`,
      );
    case 'unstarted':
    case 'killed':
      throw new HapticError(
        errorCodes.TOOL_FAILED,
        `${helmBin} could not run (${run.kind === 'unstarted' ? run.reason : `killed by ${run.signal}`}); install helm or set HELM_BIN to its path.`,
      );
    case 'exited': {
      if (run.code !== 0) {
        const failure = describeHelmFailure(run.stderr, release);
        throw new HapticError(failure.code, failure.message);
      }
      return run.stdout;
    }
  }
}

/** helm, started before its values are known. */
export interface PendingRender {
  /**
   * Gives helm the values (JSON on its stdin) and resolves with its output, unparsed (see
   * parseManifest), or rejects as renderChart does. Call once.
   */
  output(values: Readonly<Record<string, unknown>>): Promise<string>;
  /** Stops helm when its values will not come. */
  abandon(): void;
}

/** What helm needs before the values: everything but them. */
export type PendingRenderOptions = Omit<RenderChartOptions, 'values' | 'valuesFiles'>;

/**
 * Starts `helm template` now and sends it the values later: helm's own start-up is about
 * half of its run (its Go packages' initialisation; `helm version` takes 50–60 ms of a
 * 90 ms `helm template` here), and it reads its values only after that, so the caller reads
 * and checks the values meanwhile.
 */
export function startRender(options: PendingRenderOptions = {}): PendingRender {
  const { helm, output } = launchHelm(options, true);
  return {
    output: (values) => {
      helm.send(JSON.stringify(values));
      return output();
    },
    abandon: () => {
      helm.kill();
    },
  };
}

/** helm started with the options' defaults applied, and what its run gives. */
export function launchHelm(
  options: Omit<RenderChartOptions, 'values'>,
  valuesOnStdin: boolean,
): { readonly helm: HelmProcess; readonly output: () => Promise<string> } {
  const release = options.release ?? 'haptic';
  const helmBin = options.helmBin ?? process.env.HELM_BIN ?? 'helm';
  const timeout = options.timeoutMs ?? defaultTimeoutMs;
  const args = helmArguments(options, release, options.namespace ?? 'haptic', valuesOnStdin);
  const helm = spawnHelm(helmBin, args, timeout);
  return { helm, output: async () => helmOutput(await helm.run, helmBin, timeout, release) };
}
