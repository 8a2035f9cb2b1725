import { describe, expect, it } from 'vitest';
import {
  type ChartMode,
  findObject,
  helmBinaries,
  jq,
  chartModes,
  renderMode,
} from './chart-fixtures.ts';

// The selectors exactly as agent-certificates.txt runs them on `kubectl get deployment -o json`.
const agentTlsSecret =
  '.spec.template.spec.volumes[] | select(.name == "agent-tls").secret.secretName';
const agentServerName =
  '.spec.template.spec.containers[] | select(.name == "controller").env[] | select(.name == "AGENT_TLS_SERVER_NAME").value';
const controllerClientName =
  '.spec.template.spec.initContainers[] | select(.name == "agent").args[] | select(startswith("--tls-client-name=")) | ltrimstr("--tls-client-name=")';

const expected: readonly (readonly [ChartMode, string, string, string, string])[] = [
  [
    'default',
    'haptic-agent-server-tls',
    'haptic-agent-client-tls',
    'haptic-agent',
    'haptic-controller',
  ],
  [
    'cert-manager',
    'haptic-agent-server-tls',
    'haptic-agent-client-tls',
    'haptic-agent',
    'haptic-controller',
  ],
  [
    'cert-manager switch',
    'haptic-cm-agent',
    'haptic-cm-controller',
    'haptic-agent',
    'haptic-controller',
  ],
  [
    'external',
    'haptic-agent-identity',
    'haptic-controller-identity',
    'agent.example.internal',
    'controller.example.internal',
  ],
];

describe.each(helmBinaries)("the spec's selectors on objects rendered by %s", (binary) => {
  it.each(expected)(
    'find the Secrets and peer names in %s mode',
    async (mode, serverSecret, clientSecret, agentName, controllerName) => {
      const objects = await renderMode(binary, chartModes[mode]);
      const haproxy = findObject(objects, 'Deployment', 'haptic-haproxy').body;
      const controller = findObject(objects, 'Deployment', 'haptic-controller').body;
      // "Check expiry" uses jq -e: it must succeed for both Deployments.
      expect(await jq('-er', agentTlsSecret, haproxy)).toEqual({
        exitCode: 0,
        stdout: serverSecret,
      });
      expect(await jq('-er', agentTlsSecret, controller)).toEqual({
        exitCode: 0,
        stdout: clientSecret,
      });
      expect(await jq('-r', agentServerName, controller)).toEqual({
        exitCode: 0,
        stdout: agentName,
      });
      expect(await jq('-r', controllerClientName, haproxy)).toEqual({
        exitCode: 0,
        stdout: controllerName,
      });
    },
  );

  it('lets wait_projected find each component and read its agent-tls files', async () => {
    const objects = await renderMode(binary, chartModes.default);
    for (const [deployment, component, container] of [
      ['haptic-haproxy', 'loadbalancer', 'agent'],
      ['haptic-controller', 'controller', 'controller'],
    ] as const) {
      const body = findObject(objects, 'Deployment', deployment).body;
      // kubectl get pods -l "app.kubernetes.io/instance=haptic,app.kubernetes.io/component=..."
      const labels = await jq(
        '-r',
        '.spec.template.metadata.labels | "\\(.["app.kubernetes.io/instance"]),\\(.["app.kubernetes.io/component"])"',
        body,
      );
      expect(labels.stdout).toBe(`haptic,${component}`);
      // kubectl exec -c <container> -- cat /etc/haptic/agent-tls/..data/<file>
      const mount = await jq(
        '-r',
        `[.spec.template.spec.containers[], .spec.template.spec.initContainers[]?] | .[] | select(.name == "${container}").volumeMounts[] | select(.name == "agent-tls").mountPath`,
        body,
      );
      expect(mount.stdout).toBe('/etc/haptic/agent-tls');
    }
  });

  it('runs the agent as a native sidecar beside two HAProxy replicas', async () => {
    const objects = await renderMode(binary, chartModes.default);
    const haproxy = findObject(objects, 'Deployment', 'haptic-haproxy').body;
    expect(haproxy).toMatchObject({ spec: { replicas: 2 } });
    const agent = await jq('-c', '.spec.template.spec.initContainers[0]', haproxy);
    expect(JSON.parse(agent.stdout)).toMatchObject({
      name: 'agent',
      restartPolicy: 'Always',
      command: ['/usr/local/bin/haptic'],
      livenessProbe: {
        exec: {
          command: [
            '/usr/local/bin/haptic',
            'agent',
            'health',
            '--local-socket=/var/run/haptic/agent.sock',
          ],
        },
      },
    });
    const args = await jq('-c', '.spec.template.spec.initContainers[0].args', haproxy);
    expect(JSON.parse(args.stdout)).toEqual([
      'agent',
      '--listen=:5555',
      '--tls-dir=/etc/haptic/agent-tls',
      '--tls-client-name=haptic-controller',
      '--base-dir=/etc/haproxy/haptic',
      '--master-socket=/var/run/haproxy/master.sock',
      '--local-socket=/var/run/haptic/agent.sock',
      '--state-file=/var/lib/haptic/state.json',
      '--check-socket=/run/haptic-check/check.sock',
    ]);
    const controller = findObject(objects, 'Deployment', 'haptic-controller').body;
    const run = await jq(
      '-c',
      '.spec.template.spec.containers[] | select(.name == "controller") | .command + .args',
      controller,
    );
    expect(JSON.parse(run.stdout)).toEqual(
      expect.arrayContaining(['/usr/local/bin/haptic', 'run', '--tls-dir=/etc/haptic/agent-tls']),
    );
  });
});
