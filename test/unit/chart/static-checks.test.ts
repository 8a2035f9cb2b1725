/**
 * The issue's static checks: kube-score and checkov on the chart's default render show no
 * PodDisruptionBudget, NetworkPolicy, anti-affinity or probe finding. Both tools are pinned and
 * installed by `make setup` (kube-score from tools/kube-score by dev/install-tools.sh, checkov
 * from tools/checkov/requirements.txt by dev/install-checkov.sh). Their findings on other topics
 * (CPU limits, image digests, ...) are not this test's business.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import { renderChart } from '../../../src/render/index.ts';

/**
 * kube-score's checks (ids as kube-score v1.20.0 lists them, `kube-score list`) on the issue's
 * topics. A WARNING or CRITICAL grade of any of them on the default render is a finding.
 */
const kubeScoreTopicChecks = {
  // PodDisruptionBudget: every Deployment and StatefulSet is targeted by a PDB...
  'deployment-has-poddisruptionbudget': 'PodDisruptionBudget',
  'statefulset-has-poddisruptionbudget': 'PodDisruptionBudget',
  // ... that says minAvailable or maxUnavailable.
  'poddisruptionbudget-has-policy': 'PodDisruptionBudget',
  // NetworkPolicy: every pod is selected by an ingress and an egress policy...
  'pod-networkpolicy': 'NetworkPolicy',
  // ... and every policy selects some pod.
  'networkpolicy-targets-pod': 'NetworkPolicy',
  // Anti-affinity: replicas are kept off one node by a podAntiAffinity on the hostname...
  'deployment-has-host-podantiaffinity': 'anti-affinity',
  'statefulset-has-host-podantiaffinity': 'anti-affinity',
  // ... and the topology spread constraints are well-formed and select the pods they spread.
  'pod-topology-spread-constraints': 'anti-affinity',
  // The selectors the PDB, the NetworkPolicy and the anti-affinity rely on: a Deployment's
  // selector matches its own pod template's labels.
  'deployment-pod-selector-labels-match-template-metadata-labels': 'anti-affinity',
  // Probes: a Service's pods have a readiness probe and a liveness probe, safely configured...
  'pod-probes': 'probes',
  // ... and not the same one for both.
  'pod-probes-identical': 'probes',
} as const;

/**
 * checkov's Kubernetes checks (ids as checkov 3.3.30 defines them) on the issue's topics. checkov
 * has none for PodDisruptionBudgets or anti-affinity; a failed one of these is a finding.
 */
const checkovTopicChecks = {
  // Probes: every long-running container (not a Job's) has a liveness probe...
  CKV_K8S_8: 'probes',
  // ... and a readiness probe.
  CKV_K8S_9: 'probes',
  // NetworkPolicy: every Pod is selected by a NetworkPolicy.
  CKV2_K8S_6: 'NetworkPolicy',
} as const;

/** The Deployments every topic check must have looked at, so that an empty result means clean. */
const deployments = ['haptic-controller', 'haptic-haproxy'] as const;

/** kube-score's checks that look at a Deployment or its pod template. */
const kubeScoreDeploymentChecks = [
  'deployment-has-poddisruptionbudget',
  'pod-networkpolicy',
  'deployment-has-host-podantiaffinity',
  'pod-topology-spread-constraints',
  'deployment-pod-selector-labels-match-template-metadata-labels',
  'pod-probes',
  'pod-probes-identical',
] as const;

/** The Kubernetes release kube-score judges apiVersions against: the chart's oldest. */
const oldestKubernetes = 'v1.30';

/** kube-score's grades (scorecard.Grade): WARNING and CRITICAL are findings. */
const kubeScoreGrades = new Map([
  [1, 'CRITICAL'],
  [5, 'WARNING'],
  [7, 'ALMOST OK'],
  [10, 'OK'],
]);
const kubeScoreWorstAcceptedGrade = 7;

/** One finding of either tool, as the assertion message lists it. */
interface Finding {
  readonly object: string;
  readonly check: string;
  readonly comment: string;
}

interface KubeScoreCheck {
  readonly check: { readonly id: string };
  readonly grade: number;
  readonly skipped: boolean;
  readonly comments: readonly { readonly path: string; readonly summary: string }[] | null;
}

interface KubeScoreObject {
  readonly object_name: string;
  readonly checks: readonly KubeScoreCheck[];
}

interface CheckovCheck {
  readonly check_id: string;
  readonly check_name: string;
  readonly resource: string;
}

interface CheckovReport {
  readonly passed: readonly CheckovCheck[];
  readonly failed: readonly CheckovCheck[];
  readonly parsingErrors: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** kube-score's `--output-format json` (v2): one entry per object with its checks. */
function parseKubeScore(stdout: string): readonly KubeScoreObject[] {
  const parsed: unknown = JSON.parse(stdout);
  if (!Array.isArray(parsed)) throw new Error(`kube-score's JSON is not a list: ${stdout}`);
  return parsed.map((entry: unknown, index) => {
    if (!isRecord(entry) || typeof entry.object_name !== 'string' || !Array.isArray(entry.checks)) {
      throw new Error(`kube-score's JSON [${index}] has no object_name and checks`);
    }
    return entry as unknown as KubeScoreObject;
  });
}

/** checkov's `--output json` for one framework: results.{passed,failed}_checks and a summary. */
function parseCheckov(stdout: string): CheckovReport {
  const parsed: unknown = JSON.parse(stdout);
  const report: unknown = Array.isArray(parsed)
    ? (parsed as unknown[]).find((r) => isRecord(r) && r.check_type === 'kubernetes')
    : parsed;
  if (!isRecord(report) || !isRecord(report.results) || !isRecord(report.summary)) {
    throw new Error(`checkov's JSON has no kubernetes results and summary: ${stdout}`);
  }
  const checks = (key: string): readonly CheckovCheck[] => {
    const list = (report.results as Record<string, unknown>)[key] ?? [];
    if (!Array.isArray(list)) throw new Error(`checkov's JSON results.${key} is not a list`);
    return list as CheckovCheck[];
  };
  const parsingErrors = report.summary.parsing_errors;
  return {
    passed: checks('passed_checks'),
    failed: checks('failed_checks'),
    parsingErrors: typeof parsingErrors === 'number' ? parsingErrors : -1,
  };
}

function isKubeScoreTopic(id: string): id is keyof typeof kubeScoreTopicChecks {
  return Object.hasOwn(kubeScoreTopicChecks, id);
}

function isCheckovTopic(id: string): id is keyof typeof checkovTopicChecks {
  return Object.hasOwn(checkovTopicChecks, id);
}

/** kube-score's topic checks graded WARNING or CRITICAL. */
function kubeScoreTopicFindings(objects: readonly KubeScoreObject[]): Finding[] {
  return objects.flatMap((object) =>
    object.checks
      .filter((c) => !c.skipped && c.grade < kubeScoreWorstAcceptedGrade)
      .flatMap((c) => (isKubeScoreTopic(c.check.id) ? [{ ...c, id: c.check.id }] : []))
      .map((c) => ({
        object: object.object_name,
        check: `${c.id} (${kubeScoreTopicChecks[c.id]}, ${kubeScoreGrades.get(c.grade) ?? `grade ${c.grade}`})`,
        comment: (c.comments ?? [])
          .map((comment) => (comment.path === '' ? '' : `${comment.path}: `) + comment.summary)
          .join('; '),
      })),
  );
}

/** checkov's failed topic checks. */
function checkovTopicFindings(report: CheckovReport): Finding[] {
  return report.failed.flatMap((c) =>
    isCheckovTopic(c.check_id)
      ? [
          {
            object: c.resource,
            check: `${c.check_id} (${checkovTopicChecks[c.check_id]})`,
            comment: c.check_name,
          },
        ]
      : [],
  );
}

function describeFindings(tool: string, findings: readonly Finding[]): string {
  const lines = findings.map((f) => `  ${f.object}: ${f.check}: ${f.comment}`);
  return `${tool} has ${findings.length} finding(s) on the default render:\n${lines.join('\n')}`;
}

/** .tools/bin/checkov, linked by dev/install-checkov.sh; throws with the fix when it is missing. */
function checkovPath(): string {
  const path = join(projectRoot, '.tools/bin/checkov');
  if (!existsSync(path)) {
    throw new Error(`${path} is missing; run \`make setup\` (dev/install-checkov.sh) first.`);
  }
  return path;
}

async function runKubeScore(manifest: string): Promise<readonly KubeScoreObject[]> {
  const args = ['score', '--output-format', 'json', '--kubernetes-version', oldestKubernetes];
  const result = await execa(toolPath('kube-score'), [...args, manifest], { reject: false });
  // 1: some check graded CRITICAL; anything else is kube-score failing.
  if (result.exitCode !== 0 && result.exitCode !== 1) {
    throw new Error(`kube-score exited ${result.exitCode ?? result.signal}: ${result.stderr}`);
  }
  return parseKubeScore(result.stdout);
}

async function runCheckov(manifest: string): Promise<CheckovReport> {
  // Offline: --skip-download and no update check (checkov asks its vendor and PyPI otherwise).
  // Without --quiet, so that the passed checks show which objects were looked at.
  const args = ['--file', manifest, '--framework', 'kubernetes', '--output', 'json', '--compact'];
  const result = await execa(checkovPath(), [...args, '--skip-download'], {
    reject: false,
    env: { CKV_SKIP_PACKAGE_UPDATE_CHECK: 'true' },
  });
  // 1: some check failed; anything else is checkov failing.
  if (result.exitCode !== 0 && result.exitCode !== 1) {
    throw new Error(`checkov exited ${result.exitCode ?? result.signal}: ${result.stderr}`);
  }
  return parseCheckov(result.stdout);
}

let kubeScore: readonly KubeScoreObject[];
let checkov: CheckovReport;

beforeAll(async () => {
  const { manifest } = await renderChart({ helmBin: toolPath('helm'), values: {} });
  const path = join(mkdtempSync(join(tmpdir(), 'chart-static-checks-')), 'default-render.yaml');
  writeFileSync(path, manifest);
  [kubeScore, checkov] = await Promise.all([runKubeScore(path), runCheckov(path)]);
}, 120_000);

describe("the chart's default render", () => {
  it('has no kube-score finding about disruption budgets, network policies, anti-affinity or probes', () => {
    for (const name of deployments) {
      const object = kubeScore.find((o) => o.object_name === `Deployment/apps/v1/haptic/${name}`);
      const looked = new Set(object?.checks.filter((c) => !c.skipped).map((c) => c.check.id));
      expect(
        kubeScoreDeploymentChecks.filter((id) => !looked.has(id)),
        `kube-score did not run these checks on Deployment ${name}`,
      ).toEqual([]);
    }
    const findings = kubeScoreTopicFindings(kubeScore);
    expect(findings, describeFindings('kube-score', findings)).toEqual([]);
  });

  it('has no checkov finding about probes or network policies', () => {
    expect(checkov.parsingErrors, 'checkov could not parse the render').toBe(0);
    const looked = [...checkov.passed, ...checkov.failed];
    for (const name of deployments) {
      for (const id of ['CKV_K8S_8', 'CKV_K8S_9']) {
        expect(
          looked.some((c) => c.check_id === id && c.resource === `Deployment.haptic.${name}`),
          `checkov did not run ${id} on Deployment ${name}`,
        ).toBe(true);
      }
    }
    const findings = checkovTopicFindings(checkov);
    expect(findings, describeFindings('checkov', findings)).toEqual([]);
  });
});
