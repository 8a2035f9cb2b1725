/**
 * The chart's config-check container sends nothing over the network, in a Pod on the real node
 * (src/sandbox/network-isolation.ts). HAProxy resolves the names of a configuration while
 * `haproxy -c` parses it; the container shares its Pod's network, so without isolation a
 * check of another tenant's configuration would send its host names to the Pod's DNS server.
 *
 * The Pod carries the config-check container exactly as the chart renders it for the
 * controller (image, arguments, security context, volumes, the Pod's security context), plus a
 * DNS listener on 127.0.0.1:53 that the Pod's resolv.conf names (dnsPolicy None) and that logs
 * every query it gets. A `haptic config check` through the container's sandbox of a
 * configuration naming `server s <name>:80` is rejected as not resolving, and no query for the
 * name arrives; plain `haproxy -c` of the same file in the same container (the control) does
 * send one. A network namespace of its own is refused there (unshare needs CAP_SYS_ADMIN under
 * the RuntimeDefault seccomp profile), which is why the sandbox uses its seccomp helper.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChartImage } from '../../../dev/lib/chart-image.ts';
import { toolPath } from '../../../dev/lib/tools.ts';
import { renderChart } from '../../../src/render/index.ts';
import { createTestNamespace, kubectl } from '../../support/cluster.ts';
import { eventually } from '../../support/eventually.ts';

interface Container {
  readonly name: string;
  readonly securityContext?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

interface PodSpec {
  readonly securityContext?: Record<string, unknown>;
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes: readonly { readonly name: string }[];
}

/** Logs `query <name>` for every DNS query it receives on 127.0.0.1:53. */
const dnsListener = `
const socket = require('node:dgram').createSocket('udp4');
socket.on('message', (message) => {
  const labels = [];
  for (let at = 12; at < message.length && message[at] !== 0; at += message[at] + 1) {
    labels.push(message.subarray(at + 1, at + 1 + message[at]).toString('latin1'));
  }
  process.stdout.write('query ' + labels.join('.') + '\\n');
});
socket.bind(53, '127.0.0.1', () => process.stdout.write('listening\\n'));
`;

const pod = 'sandbox-network';

function configNaming(host: string): string {
  return `global
  maxconn 100
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 5s
backend app
  server s ${host}:80
`;
}

async function exec(namespace: string, command: readonly string[], input?: string) {
  return kubectl(
    [
      'exec',
      ...(input === undefined ? [] : ['-i']),
      '-n',
      namespace,
      pod,
      '-c',
      'config-check',
      '--',
      ...command,
    ],
    input,
  );
}

async function queries(namespace: string): Promise<string> {
  return (await kubectl(['logs', '-n', namespace, pod, '-c', 'dns-listener'])).stdout;
}

describe("the chart's config-check container in a Pod", () => {
  let namespace: string;
  const suffix = randomBytes(4).toString('hex');
  const isolated = `isolated-${suffix}.probe.example`;
  const control = `control-${suffix}.probe.example`;

  beforeAll(async () => {
    namespace = await createTestNamespace('sandbox-network');
    const { objects } = await renderChart({ helmBin: toolPath('helm'), values: {} });
    const deployment = objects.find(
      (object) => object.kind === 'Deployment' && object.metadata.name === 'haptic-controller',
    );
    const spec = (deployment?.body as { spec: { template: { spec: PodSpec } } } | undefined)?.spec
      .template.spec;
    const configCheck = spec?.initContainers?.find((c) => c.name === 'config-check');
    if (spec === undefined || configCheck === undefined) {
      throw new Error('the chart renders no config-check container for haptic-controller');
    }
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: {
          ...spec.securityContext,
          // The listener (non-root, no capabilities) binds port 53: a namespaced, safe sysctl.
          sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '53' }],
        },
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['127.0.0.1'],
          options: [
            { name: 'timeout', value: '1' },
            { name: 'attempts', value: '1' },
          ],
        },
        initContainers: [configCheck],
        containers: [
          {
            name: 'dns-listener',
            image: readChartImage().reference,
            imagePullPolicy: 'IfNotPresent',
            command: ['/usr/local/bin/node', '-e', dnsListener],
            securityContext: configCheck.securityContext,
          },
        ],
        volumes: spec.volumes.filter((volume) =>
          ['check-socket', 'check-tmp'].includes(volume.name),
        ),
      },
    };
    const applied = await kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
    expect(applied.exitCode, applied.stderr).toBe(0);
    const ready = await kubectl([
      'wait',
      '-n',
      namespace,
      '--for=condition=Ready',
      `pod/${pod}`,
      '--timeout=120s',
    ]);
    expect(ready.exitCode, ready.stderr).toBe(0);
    await eventually(
      'the DNS listener listens',
      () => queries(namespace),
      (log) => log.includes('listening'),
    );
    for (const [dir, host] of [
      ['isolated', isolated],
      ['control', control],
    ] as const) {
      const written = await exec(
        namespace,
        ['sh', '-c', `mkdir -p /tmp/${dir} && cat > /tmp/${dir}/haproxy.cfg`],
        configNaming(host),
      );
      expect(written.exitCode, written.stderr).toBe(0);
    }
  });

  afterAll(async () => {
    await kubectl(['delete', 'namespace', namespace, '--wait=false']);
  });

  it('checks through its sandbox without sending the name to the DNS server', async () => {
    const checked = await exec(namespace, [
      '/usr/local/bin/haptic',
      'config',
      'check',
      '--check-socket=/run/haptic-check/check.sock',
      '/tmp/isolated',
    ]);
    expect(checked.exitCode, checked.stderr).toBe(1);
    expect(`${checked.stdout}${checked.stderr}`).toMatch(
      /haproxy\.cfg:9: 'server' names a host that does not resolve/,
    );
    const logs = await kubectl(['logs', '-n', namespace, pod, '-c', 'config-check']);
    expect(logs.stdout).toContain('"networkIsolation":"seccomp"');
    // The control: the same container's plain haproxy -c does ask the listener.
    const plain = await exec(namespace, ['haproxy', '-c', '-f', '/tmp/control/haproxy.cfg']);
    expect(plain.exitCode).not.toBe(0);
    const log = await eventually(
      'the control query arrives',
      () => queries(namespace),
      (text) => text.includes(`query ${control}`),
    );
    expect(log).not.toContain(isolated);
  });

  it('cannot have a network namespace of its own there (why seccomp)', async () => {
    for (const command of [
      ['unshare', '--net', '--map-current-user', 'true'],
      ['unshare', '-rn', 'true'],
    ]) {
      const result = await exec(namespace, command);
      expect(result.exitCode, command.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(/Operation not permitted/);
    }
  });
});
