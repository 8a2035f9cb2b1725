import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { toolPath } from '../../../dev/lib/tools.ts';
import {
  type RenderChartOptions,
  type RenderedObject,
  embeddedChartDir,
  renderChart,
} from '../../../src/render/index.ts';

/** Both Helm majors, as built by dev/install-tools.sh. */
export const helmBinaries = ['helm', 'helm4'] as const;
export type HelmBinary = (typeof helmBinaries)[number];

export const chartDir = embeddedChartDir();

/**
 * A public CA certificate (P-256, CN haptic-test-webhook-ca, valid until 2126), base64-encoded
 * as the GitOps guide puts it into controller.webhook.caBundle. Its key was discarded.
 */
export const webhookCaBundle = Buffer.from(
  [
    '-----BEGIN CERTIFICATE-----',
    'MIIBqTCCAU+gAwIBAgIUZ3HguVdHyFCm9qaTK6IWElUGRmkwCgYIKoZIzj0EAwIw',
    'ITEfMB0GA1UEAwwWaGFwdGljLXRlc3Qtd2ViaG9vay1jYTAgFw0yNjExMjkxNTM2',
    'MjlaGA8yMTI2MTEwNTE1MzYyOVowITEfMB0GA1UEAwwWaGFwdGljLXRlc3Qtd2Vi',
    'aG9vay1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABOhk5cjZzK0kFIOl5tHr',
    'GgsCmT0zYpv/ze4B5Cu4aqWfrIUmzrThIQKCKa+V7ir9p4wcgiFPxpZ01HuuhS/q',
    '306jYzBhMB0GA1UdDgQWBBQh7p2Xbb3+MUaXNMmusvPmGRuqijAfBgNVHSMEGDAW',
    'gBQh7p2Xbb3+MUaXNMmusvPmGRuqijAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB',
    '/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEAydZKdeEithmqurX2K6d0Zl16ks4u',
    'rVIN4SY4kTPuFBYCIEaSRkBEpVaTZiba6Kuvm53ewVSzedvD3mnWMzimfKnq',
    '-----END CERTIFICATE-----',
    '',
  ].join('\n'),
).toString('base64');

/**
 * Values of every mode the guides describe, taken from the spec's own examples where it gives
 * them. The four issue modes come first: default, cert-manager, external, legacy.
 */
export const chartModes = {
  default: {},
  'cert-manager': { haproxy: { agent: { tls: { certManager: { enabled: true } } } } },
  external: {
    haproxy: {
      agent: {
        tls: {
          managed: false,
          serverSecretName: 'haptic-agent-identity',
          clientSecretName: 'haptic-controller-identity',
          serverName: 'agent.example.internal',
          clientName: 'controller.example.internal',
        },
      },
    },
  },
  legacy: {
    credentials: { existingSecret: 'haptic-gitops-credentials' },
    haproxy: { agent: { tls: { enabled: false } } },
  },
  'cert-manager existing issuer': {
    haproxy: {
      agent: {
        tls: {
          certManager: {
            enabled: true,
            createIssuer: false,
            issuerRef: { name: 'organisation', kind: 'ClusterIssuer', group: 'cert-manager.io' },
          },
        },
      },
    },
  },
  'cert-manager switch': {
    haproxy: {
      agent: {
        tls: {
          certManager: { enabled: true },
          issuerSecretName: 'haptic-cm-issuer',
          serverSecretName: 'haptic-cm-agent',
          clientSecretName: 'haptic-cm-controller',
        },
      },
    },
  },
  'gitops external certificates': {
    credentials: { existingSecret: 'haptic-gitops-credentials' },
    controller: {
      webhook: {
        secretName: 'haptic-gitops-webhook',
        caBundle: webhookCaBundle,
        certManager: { enabled: false },
      },
    },
    defaultSSLCertificate: {
      secretName: 'haptic-gitops-frontend',
      certManager: { enabled: false },
    },
  },
  'gitops cert-manager': {
    credentials: { existingSecret: 'haptic-gitops-credentials' },
    controller: { webhook: { certManager: { enabled: true } } },
  },
} as const satisfies Record<string, Record<string, unknown>>;

export type ChartMode = keyof typeof chartModes;
export const chartModeNames = Object.keys(chartModes) as ChartMode[];

/** Writes values to a temporary YAML (JSON) file, for commands that take files only. */
export function writeValuesFile(values: Readonly<Record<string, unknown>>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'chart-values-')), 'values.json');
  writeFileSync(path, JSON.stringify(values));
  return path;
}

const renders = new Map<string, Promise<readonly RenderedObject[]>>();

/**
 * Renders the embedded chart for release `haptic` in namespace `haptic`. Renders are shared
 * within a test file (rendering is deterministic; the determinism tests call renderChart).
 */
export function renderMode(
  binary: HelmBinary,
  values: Readonly<Record<string, unknown>>,
  options: Omit<RenderChartOptions, 'helmBin' | 'values'> = {},
): Promise<readonly RenderedObject[]> {
  const key = JSON.stringify([binary, values, options]);
  let objects = renders.get(key);
  if (objects === undefined) {
    objects = renderChart({ ...options, helmBin: toolPath(binary), values }).then((r) => r.objects);
    renders.set(key, objects);
  }
  return objects;
}

/** The object of a kind and name; throws (failing the test) when it is missing. */
export function findObject(
  objects: readonly RenderedObject[],
  kind: string,
  name: string,
): RenderedObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) {
    throw new Error(
      `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  }
  return found;
}

/** Runs jq (as the spec's commands do) over an object; returns stdout and the exit code. */
export async function jq(
  flags: string,
  filter: string,
  input: unknown,
): Promise<{ readonly exitCode: number; readonly stdout: string }> {
  const result = await execa('jq', [flags, filter], {
    input: JSON.stringify(input),
    reject: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout };
}

/** Runs a Helm binary with arguments; never throws on exit codes. */
export async function runHelm(
  binary: HelmBinary,
  args: readonly string[],
): Promise<{ readonly exitCode: number; readonly stdout: string; readonly stderr: string }> {
  const result = await execa(toolPath(binary), args, { reject: false });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}
