/**
 * The sample backend of tests and benches: a Deployment of one replica running the product
 * image's Node, answering every request with `<name> <path>` on :8080 (or, asked with
 * `Accept: application/json`, with what it received: name, method, path, headers and the
 * client's address), and its Service (port 80, named `http`), whose EndpointSlice the cluster
 * maintains.
 */

/** The server the container runs (`node -e`). */
const sampleServer = [
  "const name = process.env.BACKEND_NAME ?? 'sample';",
  "require('node:http').createServer((req, res) => {",
  "  if (req.headers.accept === 'application/json') {",
  '    const { method, url: path, headers } = req;',
  '    const client = req.socket.remoteAddress;',
  '    const body = JSON.stringify({ name, method, path, headers, client });',
  "    res.writeHead(200, { 'content-type': 'application/json' }).end(body);",
  '    return;',
  '  }',
  "  res.writeHead(200, { 'content-type': 'text/plain' }).end(`${name} ${req.url}`);",
  '}).listen(8080);',
  "process.on('SIGTERM', () => process.exit(0));",
].join('\n');

/** The Deployment and Service of backend `name` in `namespace`, from `image` (the product's). */
export function sampleBackendObjects(
  name: string,
  namespace: string,
  image: string,
): Record<string, unknown>[] {
  const labels = { app: name };
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'web',
                image,
                imagePullPolicy: 'Never',
                command: ['/usr/local/bin/node', '-e', sampleServer],
                env: [{ name: 'BACKEND_NAME', value: name }],
                ports: [{ name: 'http', containerPort: 8080 }],
                readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    },
  ];
}
