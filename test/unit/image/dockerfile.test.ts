import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChartImage } from '../../../dev/lib/chart-image.ts';
import { projectRoot } from '../../../dev/lib/tools.ts';
import type { RenderedObject } from '../../../src/render/index.ts';
import { declaredImage, readProjectDockerfile } from '../../support/dockerfile.ts';
import { chartModes, renderMode } from '../chart/chart-fixtures.ts';

interface Container {
  readonly name: string;
  readonly image: string;
  readonly command?: readonly string[];
}

interface PodSpec {
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
}

/** The Pod template of a Deployment, Job or CronJob; undefined for other kinds. */
function podSpecOf(object: RenderedObject): PodSpec | undefined {
  const spec = object.body.spec as {
    template?: { spec: PodSpec };
    jobTemplate?: { spec: { template: { spec: PodSpec } } };
  };
  if (object.kind === 'Deployment' || object.kind === 'Job') return spec.template?.spec;
  if (object.kind === 'CronJob') return spec.jobTemplate?.spec.template.spec;
  return undefined;
}

const stages = readProjectDockerfile();
const declared = declaredImage(stages);

describe('the Dockerfile and make image build the same image', () => {
  it('assembles the layers with image/assemble.sh, which image/build.sh runs too', () => {
    const runs = stages
      .find((stage) => stage.name === 'assemble')
      ?.instructions.filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => instruction.value);
    expect(runs?.some((run) => /(^|&& )image\/assemble\.sh \/layers$/.test(run))).toBe(true);
    const build = readFileSync(join(projectRoot, 'image/build.sh'), 'utf8');
    expect(build).toMatch(/^image\/assemble\.sh "\$work\/layers"$/m);
  });

  it('copies the three layers assemble.sh lays out, in the order build.sh stacks them', () => {
    const build = readFileSync(join(projectRoot, 'image/build.sh'), 'utf8');
    const stacked = /^for layer in ([a-z ]+); do$/m.exec(build)?.[1]?.split(' ');
    expect(stacked).toEqual(['base', 'runtime', 'app']);
    expect(declared.copiedLayers).toEqual(
      (stacked ?? []).map((layer) => ({ stage: 'assemble', source: `/layers/${layer}/` })),
    );
  });
});

describe("the image agrees with the chart's Pods", () => {
  const chartImage = readChartImage();

  it('every container of the image runs the entry point, /usr/local/bin/haptic, but HAProxy', async () => {
    expect(declared.entrypoint).toEqual(['/usr/local/bin/haptic']);
    const containers = (await renderMode('helm', chartModes.default))
      .flatMap((object) => {
        const spec = podSpecOf(object);
        return spec === undefined ? [] : [...spec.containers, ...(spec.initContainers ?? [])];
      })
      .filter((container) => container.image === chartImage.reference);
    expect(containers.map((container) => container.name)).toEqual(
      expect.arrayContaining(['controller', 'agent', 'config-check', 'haproxy']),
    );
    for (const container of containers) {
      if (container.name !== 'haproxy') {
        expect(container.command?.[0], container.name).toBe(declared.entrypoint[0]);
        continue;
      }
      // HAProxy runs from the same image by default (Debian's haproxy, on its PATH), under the
      // image's /bin/sh, which turns the kubelet's SIGTERM into HAProxy's soft stop.
      const [shell, flag, script] = container.command ?? [];
      expect([shell, flag], container.name).toEqual(['/bin/sh', '-c']);
      expect(script).toMatch(/^\s*haproxy "\$@" &$/m);
    }
  });

  it("runs as the user and group of the chart's haptic-only Pods (65532)", async () => {
    const pods = (await renderMode('helm', chartModes.default))
      .map((object) => ({ object, spec: podSpecOf(object) }))
      .filter(
        ({ spec }) =>
          spec !== undefined &&
          [...spec.containers, ...(spec.initContainers ?? [])].every(
            (container) => container.image === chartImage.reference && container.name !== 'haproxy',
          ),
      );
    expect(pods.map(({ object }) => object.metadata.name)).toContain('haptic-controller');
    for (const { object, spec } of pods) {
      const context = spec?.securityContext;
      expect(
        `${String(context?.runAsUser)}:${String(context?.runAsGroup)}`,
        object.metadata.name,
      ).toBe(declared.user);
    }
    expect(declared.user).toBe('65532:65532');
  });
});
