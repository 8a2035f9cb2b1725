import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  type KubeAccess,
  type KubeRequest,
  kubeAccessOf,
  loadKubeAccess,
  serviceAccountAccess,
} from './kube-access.ts';
import { loadKubeConfig } from './kube-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-access-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const b64 = (text: string): string => Buffer.from(text).toString('base64');
writeFileSync(join(dir, 'ca.pem'), 'CA FROM FILE');
writeFileSync(join(dir, 'client.pem'), 'CERT FROM FILE');

let written = 0;
/** A kubeconfig file with one context over `cluster` and `user`. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(dir, `config-${(written += 1)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

/** What a request gets from `access`: the fields that decide TLS verification and identity. */
async function applied(access: KubeAccess): Promise<Record<string, unknown>> {
  const request: KubeRequest = { headers: {} };
  await access.apply(request);
  const text = (value: unknown): string | undefined =>
    Buffer.isBuffer(value) ? value.toString() : undefined;
  return {
    server: access.server,
    ca: text(request.ca),
    cert: text(request.cert),
    key: text(request.key),
    rejectUnauthorized: request.rejectUnauthorized,
    servername: request.servername,
    authorization: request.headers.Authorization,
  };
}

const supported: readonly (readonly [string, Record<string, unknown>, Record<string, unknown>])[] =
  [
    [
      'inline CA, client certificate and key',
      { 'certificate-authority-data': b64('CA DATA') },
      { 'client-certificate-data': b64('CERT DATA'), 'client-key-data': b64('KEY DATA') },
    ],
    [
      'files relative to the kubeconfig, winning over inline data',
      { 'certificate-authority': 'ca.pem', 'certificate-authority-data': b64('CA DATA') },
      { 'client-certificate': join(dir, 'client.pem'), 'client-key-data': b64('KEY DATA') },
    ],
    [
      'a bearer token, verification off and a TLS server name',
      { 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes.default' },
      { token: 'the-token' },
    ],
    ['no credentials at all', {}, {}],
  ];

describe('loadKubeAccess', () => {
  it.each(supported)(
    'gives the full client’s TLS options and headers for %s',
    async (_name, cluster, user) => {
      const path = kubeconfig(cluster, user);
      const light = loadKubeAccess(path);
      expect(light).toBeDefined();
      if (light === undefined) return;
      expect(await applied(light)).toEqual(await applied(kubeAccessOf(loadKubeConfig(path))));
      // The fixed TLS options it declares (for one HTTP/2 connection) are the ones it applies.
      const request: KubeRequest = { headers: {} };
      await light.apply(request);
      const { ca, cert, key, rejectUnauthorized, servername } = request;
      expect(light.tls).toEqual(
        Object.fromEntries(
          Object.entries({ ca, cert, key, rejectUnauthorized, servername }).filter(
            ([, value]) => value !== undefined,
          ),
        ),
      );
    },
  );

  it('declares no fixed TLS options for the full client’s configuration', () => {
    const path = kubeconfig({}, { token: 't' });
    expect(kubeAccessOf(loadKubeConfig(path)).tls).toBeUndefined();
  });

  it.each([
    ['an exec credential plugin', {}, { exec: { command: 'aws', apiVersion: 'v1' } }],
    ['an auth provider', {}, { 'auth-provider': { name: 'oidc' } }],
    ['basic authentication', {}, { username: 'a', password: 'b' }],
    ['a proxy', { 'proxy-url': 'http://proxy:3128' }, {}],
    ['a plain-http server', { server: 'http://127.0.0.1:8080' }, {}],
    ['a CA file that cannot be read', { 'certificate-authority': 'missing.pem' }, {}],
  ])('leaves %s to the full client', (_name, cluster, user) => {
    expect(loadKubeAccess(kubeconfig(cluster, user))).toBeUndefined();
  });

  it('leaves a kubeconfig without a usable current context to the full client (its errors)', () => {
    const path = join(dir, 'no-context');
    writeFileSync(path, stringify({ clusters: [], users: [], contexts: [] }));
    expect(loadKubeAccess(path)).toBeUndefined();
    expect(loadKubeAccess(join(dir, 'absent'))).toBeUndefined();
    expect(() => loadKubeConfig(path)).toThrow(/no current context with a cluster/);
  });

  it('reads KUBECONFIG when it names one file, and leaves a list of files (merged) to the full client', () => {
    const path = kubeconfig({}, { token: 't' });
    const saved = process.env.KUBECONFIG;
    try {
      process.env.KUBECONFIG = path;
      expect(loadKubeAccess()?.server).toBe('https://127.0.0.1:6443');
      process.env.KUBECONFIG = [path, kubeconfig({}, {})].join(delimiter);
      expect(loadKubeAccess()).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it('sends the ServiceAccount token the kubelet last wrote, for every request (it rotates hourly)', async () => {
    const account = join(dir, 'serviceaccount');
    mkdirSync(account);
    writeFileSync(join(account, 'ca.crt'), 'CLUSTER CA');
    writeFileSync(join(account, 'token'), 'first\n');
    const saved = {
      host: process.env.KUBERNETES_SERVICE_HOST,
      port: process.env.KUBERNETES_SERVICE_PORT,
    };
    try {
      process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
      process.env.KUBERNETES_SERVICE_PORT = '443';
      const access = serviceAccountAccess(account);
      expect(access?.server).toBe('https://[fd00::1]:443');
      const request = async (): Promise<KubeRequest> => {
        const options: KubeRequest = { headers: {} };
        await access?.apply(options);
        return options;
      };
      const first = await request();
      expect(String(first.ca)).toBe('CLUSTER CA');
      expect(String(access?.tls?.ca)).toBe('CLUSTER CA');
      expect(first.headers.Authorization).toBe('Bearer first');
      writeFileSync(join(account, 'token'), 'second');
      expect((await request()).headers.Authorization).toBe('Bearer second');
      process.env.KUBERNETES_SERVICE_PORT = '8080';
      expect(serviceAccountAccess(account)).toBeUndefined();
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });
});
