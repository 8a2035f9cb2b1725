/**
 * The README's quick start, as a new user runs it: `make publish` pushes the image and the
 * chart to an OCI registry (a real one, CNCF distribution, in the node's network namespace,
 * reached as 127.0.0.1:5000 there, as the lifecycle suite runs it), then the README's own
 * `helm install … oci://…` installs the published chart, and the node's containerd pulls the
 * image from the registry by the digest the chart pins: no image value, no `ctr import`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { startOciRegistry, type OciRegistry } from '../../../dev/gitops/oci-registry.ts';
import { nodeNetns } from '../../../dev/lib/node/node-network.ts';
import { projectRoot, toolPath } from '../../../dev/lib/tools.ts';
import { readChartMetadata, embeddedChartDir } from '../../../src/render/index.ts';
import { createTestNamespace, helm, kubectl } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';

/** The README's example registry, which the quick start's commands name. */
const readmeRegistry = 'registry.example.com/team';

/** The README's `helm install … oci://…` command, its continuation lines joined. */
function readmeInstallCommand(): string {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8').replace(/\\\n\s*/g, '');
  const line = readme.split('\n').find((l) => l.startsWith('helm install haptic oci://'));
  if (line === undefined) throw new Error('README.md has no `helm install haptic oci://` line');
  return line;
}

/** Runs a command in the node's network namespace, where the registry is 127.0.0.1:5000. */
function inNode(command: string, args: readonly string[]) {
  return execa('nsenter', [`--net=/run/netns/${nodeNetns}`, '--', command, ...args], {
    env: { KUBECONFIG: inject('kubeconfig') },
    reject: false,
  });
}

describe('the README quick start: make publish, then helm install from the registry', () => {
  let dir = '';
  let registry: OciRegistry | undefined;
  let namespace: string | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'published-install-'));
    registry = await startOciRegistry(dir);
  });
  afterAll(async () => {
    if (namespace !== undefined) {
      await helm(['uninstall', 'haptic', '-n', namespace, '--wait']);
      await kubectl(['delete', 'namespace', namespace, '--wait=false']);
    }
    await registry?.process.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs with the README’s command and the Pods pull the published image by digest', async () => {
    const endpoint = registry?.nodeEndpoint ?? '';
    expect(endpoint).toBe('127.0.0.1:5000');
    const publish = await inNode(process.execPath, [
      join(projectRoot, 'dev/publish.ts'),
      ...['--registry', endpoint, '--plain-http'],
    ]);
    expect(publish.exitCode, publish.stderr).toBe(0);
    // helm push reports the chart it pushed on stderr.
    expect(publish.stderr).toContain(`Pushed: ${endpoint}/charts/haptic:`);
    const digest = /^Published \S+@(sha256:[a-f0-9]{64})$/m.exec(publish.stdout)?.[1] ?? '';
    expect(digest).not.toBe('');
    const image = `${endpoint}/haptic@${digest}`;

    const ns = await createTestNamespace('published');
    const { version } = readChartMetadata(embeddedChartDir());
    const command = readmeInstallCommand()
      .replaceAll(readmeRegistry, endpoint)
      .replaceAll('"$version"', version)
      .replace('--namespace haptic', `--namespace ${ns}`);
    expect(command).toBe(
      `helm install haptic oci://${endpoint}/charts/haptic --version ${version} --namespace ${ns} --create-namespace`,
    );
    const [, ...args] = command.split(' ');
    namespace = ns;
    // A registry without TLS, as the README says; an IngressClass of the test's own, and one
    // controller, as every other release on the shared two-core node has.
    const install = await inNode(toolPath('helm'), [
      ...args,
      '--plain-http',
      ...['--set', `ingressClass.name=${ns}`, '--set', 'controller.replicas=1'],
      // Every Pod resolves the digest at the registry, even on a node that already holds the
      // image (imported for the other tests as localhost/haptic), without removing anything
      // from the node's containerd that the other tests' Pods use.
      ...['--set', 'image.pullPolicy=Always'],
    ]);
    expect(install.exitCode, install.stderr).toBe(0);
    // helm reports the chart it pulled, and nothing else.
    expect(install.stderr).toBe(
      `Pulled: ${endpoint}/charts/haptic:${version}\n${/^Digest: sha256:[a-f0-9]{64}$/m.exec(install.stderr)?.[0] ?? 'Digest: missing'}`,
    );
    for (const deployment of ['haptic-controller', 'haptic-haproxy']) {
      const rollout = await kubectl([
        ...['rollout', 'status', `deployment/${deployment}`, '-n', ns, '--timeout=180s'],
      ]);
      expect(rollout.stderr).toBe('');
      expect(rollout.exitCode).toBe(0);
    }

    const pods = JSON.parse(
      (
        await kubectl([
          'get',
          'pods',
          '-n',
          ns,
          '-l',
          'app.kubernetes.io/instance=haptic',
          '-o',
          'json',
        ])
      ).stdout,
    ) as {
      items: {
        spec: { containers: { image: string }[]; initContainers?: { image: string }[] };
        status: { containerStatuses?: { imageID: string }[] };
      }[];
    };
    expect(pods.items.length).toBeGreaterThanOrEqual(2);
    for (const pod of pods.items) {
      const specImages = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map(
        (c) => c.image,
      );
      expect(new Set(specImages)).toEqual(new Set([image]));
      for (const status of pod.status.containerStatuses ?? []) {
        expect(status.imageID).toBe(image);
      }
    }
    // The node's containerd resolved that digest at the registry (it already held the layers,
    // imported for the other tests under localhost/haptic, so it fetched no blob).
    const requests = readFileSync(join(dir, 'registry.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('containerd') && !line.startsWith('time='));
    expect(requests.join('\n')).toMatch(
      new RegExp(`"(GET|HEAD) /v2/haptic/manifests/${digest} HTTP/1\\.1" 200 `),
    );

    // The admission webhook is on without any certificate value: the hook Job issued its
    // serving certificate and set the registration's caBundle, and the API server reaches it.
    const caBundles = await kubectl([
      ...['get', 'validatingwebhookconfiguration', `${ns}-haptic-webhook`],
      ...['-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'],
    ]);
    const ca = await kubectl([
      ...['get', 'secret', 'haptic-webhook-default-tls', '-n', ns],
      ...['-o', 'jsonpath={.data.ca\\.crt}'],
    ]);
    expect(ca.stdout).not.toBe('');
    expect(new Set(caBundles.stdout.split(' '))).toEqual(new Set([ca.stdout]));
    const badIngress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'bad', namespace: ns },
      spec: {
        ingressClassName: ns,
        rules: [
          {
            host: 'bad.localdev.me',
            http: {
              paths: [
                {
                  path: '/a b',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    };
    // Ingress reviews fail open (`failurePolicy: Ignore`), so until the API server can reach a
    // ready controller through the Service (endpoints and proxy rules follow readiness), a bad
    // Ingress is let through: wait for the first denial rather than try once.
    const denied = await eventually(
      'a bad Ingress denied by the webhook',
      () => kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(badIngress)),
      (result) => result.exitCode !== 0,
      60_000,
    );
    expect(denied.stderr).toMatch(/admission webhook "[^"]+" denied the request/);
  }, 420_000);
});
