// node dev/publish.ts --registry host[:port][/path] [--plain-http]   (make publish REGISTRY=…)
//
// Publishes this checkout's release to an OCI registry of yours: the image `make image` built
// (.image/haptic-<version>.oci.tar) as <registry>/haptic:<version>, then the chart as the OCI
// artifact oci://<registry>/charts/haptic:<version>, whose default image is that push, pinned
// by its digest. `helm install haptic oci://<registry>/charts/haptic --version <version>` then
// runs what was pushed. amd64 only: the image is built for linux/amd64.
//
// Credentials are the tools' own: `skopeo login <registry-host>` for the image and
// `helm registry login <registry-host>` for the chart. --plain-http is for a registry without
// TLS (a local one); never use it across a network.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { readChartMetadata } from '../src/render/index.ts';
import { imageArchivePath, readChartImage } from './lib/chart-image.ts';
import { projectRoot, toolPath } from './lib/tools.ts';
import {
  publishedLocations,
  publishedSchema,
  publishedValues,
  registryProblem,
} from './publish/published-chart.ts';

function fail(message: string): never {
  process.stderr.write(`dev/publish.ts: ${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({
  options: { registry: { type: 'string', default: '' }, 'plain-http': { type: 'boolean' } },
  strict: true,
});
const registry = values.registry;
const plainHttp = values['plain-http'] === true;
const problem = registryProblem(registry);
if (problem !== undefined) fail(problem);

const chartDir = join(projectRoot, 'chart');
const { version } = readChartMetadata(chartDir);
const image = readChartImage(chartDir);
const archive = imageArchivePath(image);
if (!existsSync(archive)) fail(`${archive} is missing: run make image first (make publish does).`);
const where = publishedLocations(registry);
const work = mkdtempSync(join(tmpdir(), 'haptic-publish-'));
try {
  const digestFile = join(work, 'image.digest');
  await execa(
    'skopeo',
    [
      ...['copy', '--quiet', '--digestfile', digestFile],
      ...(plainHttp ? ['--dest-tls-verify=false'] : []),
      `oci-archive:${archive}`,
      `docker://${where.imageRepository}:${image.tag}`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  ).catch(() =>
    fail(
      `skopeo could not push the image to ${where.imageRepository}:${image.tag} (its message is above); check the address and \`skopeo login\`.`,
    ),
  );
  const digest = readFileSync(digestFile, 'utf8').trim();

  const chart = join(work, 'haptic');
  cpSync(chartDir, chart, { recursive: true });
  for (const [file, rewrite] of [
    ['values.yaml', publishedValues],
    ['values.schema.json', publishedSchema],
  ] as const) {
    const path = join(chart, file);
    writeFileSync(path, rewrite(readFileSync(path, 'utf8'), where.imageRepository, digest));
  }
  const helm = toolPath('helm');
  await execa(helm, ['package', chart, '--destination', work]);
  await execa(
    helm,
    [
      'push',
      join(work, `haptic-${version}.tgz`),
      where.chartRepository,
      ...(plainHttp ? ['--plain-http'] : []),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  ).catch(() =>
    fail(
      `helm could not push the chart to ${where.chartRepository} (its message is above); check the address and \`helm registry login\`.`,
    ),
  );
  process.stdout.write(
    [
      `Published ${where.imageRepository}:${image.tag}@${digest}`,
      `and the chart ${where.chartReference} ${version}, whose default image is that digest.`,
      `Install: helm install haptic ${where.chartReference} --version ${version} --namespace haptic --create-namespace${plainHttp ? ' --plain-http' : ''}`,
      '',
    ].join('\n'),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
