/**
 * Bench fixtures for the controller: the chart's default HAProxyTemplateConfig (read from
 * chart/files, as the chart ships it) and a cluster snapshot of n Ingresses, each with two
 * paths (Prefix / and Exact /api) to its own Service with two endpoints; every tenth with TLS.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { projectRoot } from '../dev/lib/tools.ts';
import type {
  ClusterSnapshot,
  EndpointSliceView,
  SecretView,
  ServiceView,
} from '../src/controller/routing/cluster-snapshot.ts';
import { type IngressView, readIngress } from '../src/validation/ingress-view.ts';
import { anyRangeEndpointRules } from '../src/validation/endpoint-addresses.ts';

const dir = join(projectRoot, 'chart/files/default-template');
const file = (name: string): string => readFileSync(join(dir, name), 'utf8');

export function defaultTemplateConfig(): Record<string, unknown> {
  return {
    apiVersion: 'haproxy-haptic.org/v1alpha1',
    kind: 'HAProxyTemplateConfig',
    metadata: { namespace: 'haptic', name: 'haptic', uid: 'bench', resourceVersion: '1' },
    spec: {
      haproxyConfig: { template: file('haproxy.cfg.liquid') },
      maps: {
        'exact.map': { template: file('exact.map.liquid') },
        'prefix.map': { template: file('prefix.map.liquid') },
        'regex.map': { template: file('regex.map.liquid') },
      },
      certificateLists: { 'certificates.list': { template: file('certificates.list.liquid') } },
    },
  };
}

/** A self-signed certificate and key (openssl), base64 as Secret data. */
export async function tlsData(host: string): Promise<Record<string, string>> {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-tls-'));
  try {
    await execa('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', join(tmp, 'tls.key'), '-out', join(tmp, 'tls.crt'), '-days', '2'],
      ...['-subj', `/CN=${host}`],
    ]);
    return {
      'tls.crt': readFileSync(join(tmp, 'tls.crt')).toString('base64'),
      'tls.key': readFileSync(join(tmp, 'tls.key')).toString('base64'),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** What an Ingress of the fixture may have besides its defaults (no annotations, / and /api). */
export interface IngressShape {
  readonly annotations?: Readonly<Record<string, string>>;
  /** Its paths, each to the Ingress's Service. @default Prefix / and Exact /api */
  readonly paths?: readonly { readonly path: string; readonly pathType: string }[];
}

const defaultPaths = [
  { path: '/', pathType: 'Prefix' },
  { path: '/api', pathType: 'Exact' },
] as const;

export function ingressView(i: number, service = `svc${i}`, shape: IngressShape = {}): IngressView {
  const backend = { service: { name: service, port: { number: 80 } } };
  const view = readIngress({
    kind: 'Ingress',
    metadata: {
      namespace: 'app',
      name: `ing${i}`,
      ...(shape.annotations === undefined ? {} : { annotations: { ...shape.annotations } }),
    },
    spec: {
      ingressClassName: 'haptic',
      ...(i % 10 === 0 ? { tls: [{ hosts: [`h${i}.example.com`], secretName: 'tls' }] } : {}),
      rules: [
        {
          host: `h${i}.example.com`,
          http: {
            paths: (shape.paths ?? defaultPaths).map(({ path, pathType }) => ({
              path,
              pathType,
              backend,
            })),
          },
        },
      ],
    },
  });
  if (typeof view === 'string') throw new Error(view);
  return view;
}

export async function snapshotOf(n: number): Promise<ClusterSnapshot> {
  const services = new Map<string, ServiceView>();
  const slices = new Map<string, EndpointSliceView[]>();
  const ingresses: IngressView[] = [];
  for (let i = 0; i < n; i += 1) {
    ingresses.push(ingressView(i));
    services.set(`app/svc${i}`, {
      namespace: 'app',
      name: `svc${i}`,
      ports: [{ name: 'http', port: 80 }],
    });
    slices.set(`app/svc${i}`, [
      {
        namespace: 'app',
        name: `svc${i}-1`,
        serviceName: `svc${i}`,
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [
          { addresses: [`10.${(i >> 8) & 255}.${i & 255}.1`], ready: true },
          { addresses: [`10.${(i >> 8) & 255}.${i & 255}.2`], ready: true },
        ],
      },
    ]);
  }
  const secrets = new Map<string, SecretView>([
    ['app/tls', { namespace: 'app', name: 'tls', data: await tlsData('example.com') }],
  ]);
  return {
    ingresses,
    services,
    endpointSlices: slices,
    secrets,
    fqdnNames: new Map(),
    endpointRules: anyRangeEndpointRules,
  };
}
