/**
 * The four synthetic releases of the lifecycle suite, built from this checkout: for each
 * version `0.0.0-gitops.<n>`, the chart packaged with that version and appVersion
 * (`helm package --version … --app-version …`) and pushed to the OCI registry (`helm push
 * --plain-http`), and the product image (`make image`) with that chart embedded, tagged with
 * the version and copied to the registry (skopeo). Chart and image come from the same build,
 * as the pre-rollout Job's version guard requires.
 * Which release is refused, and why, is the phases' business (lifecycle-phases.ts).
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { imageArchivePath, readChartImage } from '../lib/chart-image.ts';
import { projectRoot, toolPath } from '../lib/tools.ts';
import type { ClusterCli } from './cluster-cli.ts';
import type { OciRegistry } from './oci-registry.ts';

export const releaseVersions = [
  '0.0.0-gitops.1',
  '0.0.0-gitops.2',
  '0.0.0-gitops.3',
  '0.0.0-gitops.4',
] as const;
export type ReleaseVersion = (typeof releaseVersions)[number];

export interface SyntheticRelease {
  readonly version: ReleaseVersion;
  /** Manifest digest of the chart in the registry. */
  readonly chartDigest: string;
  /** Manifest digest of the image in the registry. */
  readonly imageDigest: string;
}

export interface SyntheticReleases {
  /** `oci://…/charts/haptic`, as this machine reaches it (Flux's OCIRepository URL). */
  readonly chartUrl: string;
  /** `host:port/charts`: the same repository in Argo CD's Helm source format (no `oci://`). */
  readonly chartRepository: string;
  /** The image repository as the node pulls it (the chart's `image.repository`). */
  readonly imageRepository: string;
  readonly releases: readonly SyntheticRelease[];
}

/** Where the image keeps the application and the chart it embeds (image/assemble.sh). */
const appPath = '/usr/local/lib/haptic';
const manifestTypes = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

async function manifestDigest(endpoint: string, repository: string, tag: string) {
  const answer = await fetch(`http://${endpoint}/v2/${repository}/manifests/${tag}`, {
    method: 'HEAD',
    headers: { accept: manifestTypes },
  });
  const digest = answer.headers.get('docker-content-digest');
  if (answer.status !== 200 || digest === null) {
    throw new Error(`${endpoint}/${repository}:${tag} is not in the registry (${answer.status})`);
  }
  return digest;
}

/** The chart of `version`: this checkout's chart with that version and appVersion. */
function writeChart(dir: string, version: ReleaseVersion): string {
  const chart = join(dir, 'charts', version, 'haptic');
  cpSync(join(projectRoot, 'chart'), chart, { recursive: true });
  const metadata = join(chart, 'Chart.yaml');
  writeFileSync(
    metadata,
    readFileSync(metadata, 'utf8')
      .replace(/^version: .*$/m, `version: ${version}`)
      .replace(/^appVersion: .*$/m, `appVersion: ${version}`),
  );
  return chart;
}

/** The application's package.json with `version`. */
function writePackageJson(dir: string, version: ReleaseVersion): string {
  const path = join(dir, 'charts', version, 'package.json');
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as object;
  writeFileSync(path, `${JSON.stringify({ ...manifest, version }, null, 2)}\n`);
  return path;
}

export async function publishSyntheticReleases(
  dir: string,
  registry: OciRegistry,
  cli: ClusterCli,
): Promise<SyntheticReleases> {
  const base = readChartImage();
  const layout = join(dir, 'image-layout');
  mkdirSync(layout, { recursive: true });
  await execa('tar', ['-xf', imageArchivePath(base), '-C', layout]);
  const packages = join(dir, 'packages');
  mkdirSync(packages, { recursive: true });
  const chartRegistry = `oci://${registry.hostEndpoint}/charts`;
  const releases: SyntheticRelease[] = [];
  for (const version of releaseVersions) {
    const chart = writeChart(dir, version);
    await cli.helm([
      ...['package', chart, '--version', version, '--app-version', version, '-d', packages],
    ]);
    await cli.helm([
      'push',
      join(packages, `haptic-${version}.tgz`),
      chartRegistry,
      '--plain-http',
    ]);
    // The image of `version`: the chart replaced whole, package.json (`haptic version`) set.
    await execa(toolPath('umoci'), [
      ...['insert', '--image', `${layout}:${base.tag}`, '--tag', version, '--opaque'],
      ...[`--history.created_by=lifecycle suite: chart ${version}`, chart, `${appPath}/chart`],
    ]);
    await execa(toolPath('umoci'), [
      ...['insert', '--image', `${layout}:${version}`],
      `--history.created_by=lifecycle suite: version ${version}`,
      ...[writePackageJson(dir, version), `${appPath}/package.json`],
    ]);
    await execa('skopeo', [
      ...['--insecure-policy', 'copy', '--quiet', '--dest-tls-verify=false'],
      ...[`oci:${layout}:${version}`, `docker://${registry.hostEndpoint}/haptic:${version}`],
    ]);
    releases.push({
      version,
      chartDigest: await manifestDigest(registry.hostEndpoint, 'charts/haptic', version),
      imageDigest: await manifestDigest(registry.hostEndpoint, 'haptic', version),
    });
  }
  return {
    chartUrl: `${chartRegistry}/haptic`,
    chartRepository: `${registry.hostEndpoint}/charts`,
    imageRepository: `${registry.nodeEndpoint}/haptic`,
    releases,
  };
}
