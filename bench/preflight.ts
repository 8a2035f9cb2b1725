/**
 * Wall time of `haptic preflight` (the built binary, dist/cli/main.js) against a bare
 * `helm template` of the same values, on a private local control plane (etcd +
 * kube-apiserver on loopback, started and stopped here). Runs are interleaved; medians and
 * p90 are reported. Run `make build` first.
 *
 *   node bench/preflight.ts [runs=15]
 *
 * The last line is one JSON object, `{"liveRatio": …, "offlineRatio": …}` (medians over the
 * median of `helm template`), so any later run can be compared. After the timed rounds, a few
 * more runs of `helm template` and the live preflight measure the CPU each uses (user + system,
 * its child processes included once waited for, as bash's `times` reports them: the preflight
 * waits for helm's and its render process's exit; not timed, so the wall figures
 * carry no shell), and `liveCpuFloor` is the live preflight's CPU spread over every core, over
 * the median of `helm template`: the ratio it could reach if its work ran perfectly in
 * parallel. A wall ratio cannot go below it without less work.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { startControlPlane } from '../dev/lib/control-plane.ts';
import { projectRoot, toolPath } from '../dev/lib/tools.ts';
import { readPackageVersion } from '../src/version.ts';

const runs = Number(process.argv[2] ?? 15);
const main = join(projectRoot, 'dist/cli/main.js');
if (!existsSync(main)) throw new Error('dist/cli/main.js is missing; run `make build` first.');

const dir = mkdtempSync(join(tmpdir(), 'bench-preflight-'));
const plane = await startControlPlane({ dir });
const kubectl = (args: string[], input?: string) =>
  execa(toolPath('kubectl'), args, {
    env: { KUBECONFIG: plane.kubeconfigPath },
    ...(input === undefined ? {} : { input }),
  });

try {
  await kubectl(['create', 'namespace', 'haptic']);
  await kubectl([
    'create',
    'secret',
    'generic',
    'creds',
    '-n',
    'haptic',
    '--from-literal=dataplane_username=a',
    '--from-literal=dataplane_password=b',
  ]);
  const values = join(dir, 'values.yaml');
  writeFileSync(values, 'credentials:\n  existingSecret: creds\ncontroller:\n  replicas: 3\n');
  const helmBin = toolPath('helm');
  const chart = join(projectRoot, 'chart');
  const env = { ...process.env, KUBECONFIG: plane.kubeconfigPath, HELM_BIN: helmBin };
  const version = readPackageVersion();

  const commands: Record<string, readonly [string, string[]]> = {
    'helm template': [helmBin, ['template', 'haptic', chart, '-n', 'haptic', '-f', values]],
    'haptic preflight (live)': [
      process.execPath,
      [main, 'preflight', '-f', values, '--expect-chart-version', version],
    ],
    'haptic preflight --offline': [
      process.execPath,
      [main, 'preflight', '-f', values, '--expect-chart-version', version, '--offline'],
    ],
    'haptic version (node start-up)': [process.execPath, [main, 'version']],
  };
  const times: Record<string, number[]> = Object.fromEntries(
    Object.keys(commands).map((k) => [k, []]),
  );
  for (let run = -2; run < runs; run += 1) {
    for (const [name, [command, args]] of Object.entries(commands)) {
      const started = performance.now();
      const result = await execa(command, args, { env, reject: false });
      const ms = performance.now() - started;
      if (result.exitCode !== 0)
        throw new Error(`${name} failed: ${result.stderr}${result.stdout}`);
      if (run >= 0) times[name]?.push(ms);
    }
  }
  const quantile = (values: number[], q: number): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  };
  const median = (name: string): number => quantile(times[name] ?? [], 0.5);
  const base = median('helm template');
  console.log(`runs: ${runs} each, interleaved, after 2 warm-up rounds; node ${process.version}`);
  for (const [name, values] of Object.entries(times)) {
    const middle = quantile(values, 0.5);
    console.log(
      `${name.padEnd(32)} median ${middle.toFixed(0).padStart(5)} ms   p90 ${quantile(values, 0.9).toFixed(0).padStart(5)} ms   ${(middle / base).toFixed(2)}× helm template`,
    );
  }
  // CPU of a command and its children: bash's `times` prints the shell's own line, then its
  // children's (`0m0.330s 0m0.100s`, user and system).
  const cpuMs = async (command: string, args: string[]): Promise<number> => {
    const result = await execa(
      'bash',
      ['-c', '"$@" >/dev/null || exit 1; times', 'bash', command, ...args],
      { env },
    );
    const children = result.stdout.trim().split('\n').at(-1) ?? '';
    const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(
      ([, minutes = '0', rest = '0']) => Number(minutes) * 60 + Number(rest),
    );
    if (seconds.length !== 2)
      throw new Error(`bash times printed ${JSON.stringify(result.stdout)}`);
    return (seconds[0] ?? 0) * 1000 + (seconds[1] ?? 0) * 1000;
  };
  const cpu: Record<string, number[]> = { 'helm template': [], 'haptic preflight (live)': [] };
  for (let run = 0; run < Math.max(5, Math.ceil(runs / 3)); run += 1) {
    for (const [name, values] of Object.entries(cpu)) {
      const [command, args] = commands[name] ?? ['', []];
      values.push(await cpuMs(command, args));
    }
  }
  const cores = availableParallelism();
  const liveCpu = quantile(cpu['haptic preflight (live)'] ?? [], 0.5);
  for (const [name, values] of Object.entries(cpu)) {
    console.log(
      `${name.padEnd(32)} CPU median ${quantile(values, 0.5).toFixed(0).padStart(5)} ms (user + system, children included)`,
    );
  }
  console.log(`live preflight CPU over ${cores} cores: ${(liveCpu / cores).toFixed(0)} ms at best`);
  const ratio = (name: string): number => Number((median(name) / base).toFixed(2));
  console.log(
    JSON.stringify({
      liveRatio: ratio('haptic preflight (live)'),
      offlineRatio: ratio('haptic preflight --offline'),
      liveCpuMs: Math.round(liveCpu),
      helmCpuMs: Math.round(quantile(cpu['helm template'] ?? [], 0.5)),
      liveCpuFloor: Number((liveCpu / cores / base).toFixed(2)),
    }),
  );
} finally {
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
}
