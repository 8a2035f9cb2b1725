import { describe, expect, it } from 'vitest';
import { runCheckExpiry } from '../../support/check-expiry.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { apply, renderTemplate } from './chart-objects.ts';
import { check, names, renew } from './renewal-harness.ts';

/** A namespace with the chart's two Deployments, whose agent-tls volumes name the identities. */
async function withDeployments(prefix: string): Promise<string> {
  const ns = await createTestNamespace(prefix);
  await apply(ns, await renderTemplate(ns, 'controller-deployment.yaml'));
  await apply(ns, await renderTemplate(ns, 'haproxy-deployment.yaml'));
  return ns;
}

describe('checking certificate expiry', () => {
  it("passes the guide's shell check and haptic certificates check on freshly issued Secrets", async () => {
    const ns = await withDeployments('certs-expiry');
    expect((await renew(ns)).exitCode).toBe(0);

    const script = await runCheckExpiry(ns);
    expect(script.exitCode).toBe(0);
    const lines = script.stdout.split('\n');
    expect(lines).toHaveLength(8);
    for (const [index, prefix] of [
      `${names.client} tls.crt: notAfter=`,
      `${names.client} ca.crt: notAfter=`,
      `${names.server} tls.crt: notAfter=`,
      `${names.server} ca.crt: notAfter=`,
    ].entries()) {
      expect(lines[index * 2]).toMatch(
        new RegExp(`^${prefix.replaceAll('.', '\\.')}\\w{3} +\\d+ [\\d:]+ \\d{4} GMT$`),
      );
      expect(lines[index * 2 + 1]).toBe('Certificate will not expire');
    }

    const command = await check(['-n', ns]);
    expect(command.stderr).toBe('');
    expect(command.exitCode).toBe(0);
    const reported = command.stdout.split('\n');
    expect(reported.map((line) => line.split(':')[0])).toEqual([
      `${names.client} tls.crt`,
      `${names.client} ca.crt`,
      `${names.server} tls.crt`,
      `${names.server} ca.crt`,
    ]);
    for (const line of reported)
      expect(line).toMatch(/ expires \d{4}-\d\d-\d\dT[\d:]+Z, in 36[45]d \d+h: ok$/);
    expect(reported[0]).toContain(': CN=haptic-controller expires');
    expect(reported[3]).toContain(': CN=haptic-agent-ca-1 expires');

    const json = await check(['-n', ns, '--output', 'json', names.server]);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      namespace: ns,
      within: '30d',
      ok: true,
      certificates: [
        { source: names.server, key: 'tls.crt', status: 'ok', subject: 'CN=haptic-agent' },
        { source: names.server, key: 'ca.crt', status: 'ok', subject: 'CN=haptic-agent-ca-1' },
      ],
    });
  });

  it('fails both checks when the certificates expire within 30 days', async () => {
    const ns = await withDeployments('certs-expiring');
    expect((await renew(ns, { validityDays: 20 })).exitCode).toBe(0);

    const script = await runCheckExpiry(ns);
    expect(script.exitCode).toBe(1);
    expect(
      script.stdout.split('\n').filter((line) => line === 'Certificate will expire'),
    ).toHaveLength(4);

    const command = await check(['-n', ns]);
    expect(command.exitCode).toBe(1);
    expect(
      command.stdout.split('\n').filter((line) => line.endsWith(': expires within 30d')),
    ).toHaveLength(4);
    expect(command.stderr).toBe(
      'haptic: 4 of 4 certificates expire within 30d or cannot be read; renew them (default provider: rerun the renewal Job, see "Monitor renewal failures"; otherwise through their issuer).',
    );
    expect((await check(['-n', ns, '--within', '19d'])).exitCode).toBe(0);
    const expired = await check(['-n', ns, '--now', '2099-01-01T00:00:00Z', names.client]);
    expect(expired.exitCode).toBe(1);
    expect(expired.stdout).toMatch(
      /^haptic-agent-client-tls tls\.crt: CN=haptic-controller expired .*, \d+d \d+h ago: expired$/m,
    );
  });

  it('fails on anything it cannot read: a missing Deployment, Secret or key, or a corrupt certificate', async () => {
    const ns = await createTestNamespace('certs-unreadable');
    await apply(ns, await renderTemplate(ns, 'haproxy-deployment.yaml'));
    const missing = await check(['-n', ns]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout.split('\n')).toEqual([
      `deployment/haptic-controller agent-tls: unreadable: Deployment ${ns}/haptic-controller does not exist`,
      `${names.server} tls.crt: unreadable: Secret ${names.server} does not exist`,
      `${names.server} ca.crt: unreadable: Secret ${names.server} does not exist`,
    ]);

    await kubectl([
      'create',
      'secret',
      'generic',
      'broken',
      '-n',
      ns,
      '--from-literal=tls.crt=garbage',
    ]);
    const broken = await check(['-n', ns, 'broken']);
    expect(broken.exitCode).toBe(1);
    expect(broken.stdout.split('\n')).toEqual([
      'broken tls.crt: unreadable: tls.crt of broken contains no PEM CERTIFICATE block.',
      'broken ca.crt: unreadable: Secret broken has no ca.crt',
    ]);
    const usage = await check(['-n', ns, '--within', 'a month']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain(
      '--within must be a duration such as 30d or 720h, not "a month"',
    );
  });
});
