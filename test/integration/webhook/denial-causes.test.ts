/**
 * A denial carries each finding's code and path as a cause (`status.details.causes`), through the
 * real API server to kubectl, with the sentences kept in the message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { preRolloutNames } from '../../../src/validation/index.ts';
import { readPackageVersion } from '../../../src/version.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { type RegisteredWebhook, registerWebhook } from './registered-webhook.ts';

const version = readPackageVersion();

function valuesSecret(namespace: string, values: unknown): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: preRolloutNames('haptic').valuesSecret,
      namespace,
      annotations: { 'haptic.haproxy.org/chart-version': version },
    },
    stringData: { 'values.yaml': stringify(values) },
  });
}

describe('denial causes through the real API server', () => {
  let ns = '';
  let hook: RegisteredWebhook | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace('webhook-causes');
    hook = await registerWebhook(ns, {
      namespace: ns,
      provider: 'external',
      serverSecret: 'agent-identity',
      clientSecret: 'controller-identity',
      serverName: 'agent.example.internal',
      clientName: 'controller.example.internal',
    });
  });

  afterAll(async () => {
    await hook?.stop();
  });

  it('kubectl apply --dry-run=server shows each cause (-v=4) and the sentences', async () => {
    const bad = valuesSecret(ns, {
      unknown: 1,
      haproxy: { agent: { tls: { certValidityDay: 90 } } },
    });
    // At -v=4 kubectl prints the API server's Status whole before its one-line summary.
    const result = await kubectl(['apply', '--dry-run=server', '-v=4', '-f', '-'], bad);
    expect(result.exitCode).toBe(1);
    const marker = 'server response object: ';
    const start = result.stderr.indexOf(marker);
    const end = result.stderr.indexOf('\nError from server');
    expect(start, result.stderr).toBeGreaterThan(-1);
    const status = JSON.parse(result.stderr.slice(start + marker.length, end)) as {
      reason: string;
      code: number;
      details?: { causes?: { reason: string; field: string; message: string }[] };
    };
    const sentence = (key: string): string =>
      `${key} is not a value of this chart: remove it or correct its spelling (values.schema.json lists every key).`;
    expect(status).toMatchObject({ reason: 'Forbidden', code: 403 });
    expect(status.details?.causes).toEqual(
      expect.arrayContaining([
        { reason: 'ValuesSchemaViolation', field: 'unknown', message: sentence('unknown') },
        {
          reason: 'ValuesSchemaViolation',
          field: 'haproxy.agent.tls.certValidityDay',
          message: sentence('haproxy.agent.tls.certValidityDay'),
        },
      ]),
    );
    const summary = result.stderr.slice(end + 1);
    expect(summary).toContain(
      `admission webhook "pre-rollout-values.haptic.haproxy.org" denied the request: - ${sentence('unknown')}\n`,
    );
    expect(summary).toContain(`- ${sentence('haproxy.agent.tls.certValidityDay')}`);
  });
});
