/**
 * The validator's I/O for a release, shared by `haptic preflight` and the webhook's values
 * Secret: rendering through src/render (the real `helm template` of the embedded chart) and
 * live reads through a LiveReader. The rules themselves stay pure.
 */
import { renderChart } from '../render/render-chart.ts';
import type { LiveReads, LiveState, ReleaseIo, SecretObject, Values } from '../validation/index.ts';
import type { SecretDecoder } from '../secrets/secret-decoder.ts';
import { type ReleaseRenderOptions, chartOptions } from './release-render.ts';

/** Read-only access to what a release validation reads from the cluster. */
export interface LiveReader {
  readSecret(namespace: string, name: string): Promise<SecretObject | undefined>;
  /** The Secret's metadata as the API server sends it when asked for metadata only; no data. */
  readSecretMetadata(namespace: string, name: string): Promise<SecretObject | undefined>;
  /** The Secret a Deployment's volume mounts, or undefined when there is none (or no Deployment). */
  readMountedSecret(
    namespace: string,
    deployment: string,
    volume: string,
  ): Promise<string | undefined>;
}

export interface ReleaseIoOptions extends ReleaseRenderOptions {
  /** Absent: offline, no live checks. */
  readonly live?: LiveReader;
  readonly decoder?: SecretDecoder;
}

export async function readLiveState(reader: LiveReader, reads: LiveReads): Promise<LiveState> {
  const { namespace } = reads;
  const [secrets, server, client] = await Promise.all([
    Promise.all([
      ...reads.secrets.map((name) => reader.readSecret(namespace, name)),
      ...reads.metadataOnly.map((name) => reader.readSecretMetadata(namespace, name)),
    ]),
    reader.readMountedSecret(namespace, reads.deployments.server, 'agent-tls'),
    reader.readMountedSecret(namespace, reads.deployments.client, 'agent-tls'),
  ]);
  const found = secrets.filter((secret): secret is SecretObject => secret !== undefined);
  return {
    secrets: new Map(found.map((secret) => [secret.name, secret])),
    mounted: {
      ...(server === undefined ? {} : { server }),
      ...(client === undefined ? {} : { client }),
    },
  };
}

export function createReleaseIo(options: ReleaseIoOptions): ReleaseIo {
  const { live } = options;
  return {
    render: async (values: Values) =>
      (await renderChart({ ...chartOptions(options), values })).objects,
    ...(live === undefined ? {} : { readLive: (reads: LiveReads) => readLiveState(live, reads) }),
    ...(options.decoder === undefined ? {} : { decoder: options.decoder }),
  };
}
