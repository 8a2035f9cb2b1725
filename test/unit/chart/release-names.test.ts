/**
 * One derivation of names, two readers: the chart (_helpers.tpl) and the validator
 * (src/validation/chart-names.ts through the release plan). This property test renders the real
 * chart with the pinned helm for generated release names of every length Helm accepts (1..53,
 * DNS-1123 label characters), with and without nameOverride / fullnameOverride, and holds every
 * name the validator uses equal to the rendered one, objects picked by their component labels.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolPath } from '../../../dev/lib/tools.ts';
import { type RenderedObject, renderChart } from '../../../src/render/index.ts';
import {
  type ReleasePlan,
  coalesceValues,
  planRelease,
  readReleaseValues,
} from '../../../src/validation/index.ts';
import { mountedSecret } from '../../../src/validation/render-rules.ts';
import { chartDefaults } from '../validation/material.ts';

const helmBin = toolPath('helm');
const defaults = chartDefaults();

/** Helm's limit on release names. */
const maxReleaseLength = 53;
/** The values schema's limit on nameOverride and fullnameOverride. */
const maxOverrideLength = 40;

const modes = {
  default: {},
  'cert-manager everywhere': {
    haproxy: { agent: { tls: { certManager: { enabled: true } } } },
    controller: { webhook: { certManager: { enabled: true } } },
  },
} as const;
type Mode = keyof typeof modes;

interface NameCase {
  readonly release: string;
  readonly nameOverride: string;
  readonly fullnameOverride: string;
  readonly mode: Mode;
}

const alphanumeric = fc.constantFrom(...Array.from('abcdefghijklmnopqrstuvwxyz0123456789'));
const labelCharacter = fc.constantFrom(...Array.from('abcdefghijklmnopqrstuvwxyz0123456789-'));

/** A DNS-1123 label of exactly this length. */
function label(length: number): fc.Arbitrary<string> {
  if (length === 1) return alphanumeric;
  return fc
    .tuple(
      alphanumeric,
      fc.array(labelCharacter, { minLength: length - 2, maxLength: length - 2 }),
      alphanumeric,
    )
    .map(([first, inner, last]) => `${first}${inner.join('')}${last}`);
}

const override = fc.oneof(
  fc.constant(''),
  fc.integer({ min: 1, max: maxOverrideLength }).chain(label),
);

/**
 * A release name of this length; sometimes with the chart's name (or the nameOverride) written
 * into it, so `haptic.fullname`'s "release already contains the name" branch is exercised too.
 * The inserted name starts and ends with a letter or digit, so the label stays valid.
 */
function releaseName(length: number, nameOverride: string): fc.Arbitrary<string> {
  const name = nameOverride === '' ? 'haptic' : nameOverride;
  return fc.tuple(label(length), fc.boolean(), fc.nat()).map(([base, contain, at]) => {
    if (!contain || name.length > length) return base;
    const start = at % (length - name.length + 1);
    return `${base.slice(0, start)}${name}${base.slice(start + name.length)}`;
  });
}

function nameCase(length: fc.Arbitrary<number>): fc.Arbitrary<NameCase> {
  return fc
    .record({
      length,
      nameOverride: override,
      fullnameOverride: override,
      mode: fc.constantFrom<Mode>('default', 'cert-manager everywhere'),
    })
    .chain(({ length: n, nameOverride, fullnameOverride, mode }) =>
      releaseName(n, nameOverride).map((release) => ({
        release,
        nameOverride,
        fullnameOverride,
        mode,
      })),
    );
}

function userValues(subject: NameCase): Record<string, unknown> {
  return {
    ...modes[subject.mode],
    ...(subject.nameOverride === '' ? {} : { nameOverride: subject.nameOverride }),
    ...(subject.fullnameOverride === '' ? {} : { fullnameOverride: subject.fullnameOverride }),
  };
}

/** Every name the validator derives and the chart renders, side by side. */
interface ReleaseNames {
  readonly controllerDeployment: string | undefined;
  readonly haproxyDeployment: string | undefined;
  readonly webhookService: string | undefined;
  readonly preRolloutJob: string | undefined;
  readonly valuesSecret: string | undefined;
  readonly serverSecret: string | undefined;
  readonly clientSecret: string | undefined;
  readonly webhookSecret: string | undefined;
  readonly issuerSecret: string | undefined;
  /** Secrets the pre-rollout Job may read. */
  readonly readable: readonly string[];
  /** Secrets cert-manager writes. */
  readonly certificates: readonly string[];
}

function planned(plan: ReleasePlan): ReleaseNames {
  const named = (role: string): string | undefined =>
    plan.secrets.find((secret) => secret.role === role)?.name;
  return {
    controllerDeployment: plan.controllerDeployment,
    haproxyDeployment: plan.haproxyDeployment,
    webhookService: plan.webhookSource === 'none' ? undefined : plan.webhookService,
    preRolloutJob: plan.preRolloutJob,
    valuesSecret: plan.valuesSecret,
    serverSecret: named('server'),
    clientSecret: named('client'),
    webhookSecret: named('webhook'),
    issuerSecret: named('issuer'),
    readable: plan.secrets
      .filter((secret) => secret.readable)
      .map((secret) => secret.name)
      .sort(),
    certificates: plan.secrets
      .filter((secret) => secret.provider === 'cert-manager')
      .map((secret) => secret.name)
      .sort(),
  };
}

function component(
  objects: readonly RenderedObject[],
  kind: string,
  name: string,
): RenderedObject | undefined {
  const found = objects.filter(
    (o) => o.kind === kind && o.metadata.labels['app.kubernetes.io/component'] === name,
  );
  if (found.length > 1)
    throw new Error(`the chart rendered ${String(found.length)} ${kind}s ${name}`);
  return found[0];
}

/** The value of `--flag=value` in an object's container arguments. */
function flag(object: RenderedObject | undefined, name: string): string | undefined {
  const text = JSON.stringify(object?.body ?? {});
  return new RegExp(`"--${name}=([^"]*)"`).exec(text)?.[1];
}

function secretNames(role: RenderedObject | undefined): string[] {
  const rules = (role?.body as { rules?: { resources: string[]; resourceNames?: string[] }[] })
    .rules;
  return [
    ...(rules?.find((rule) => rule.resources.includes('secrets'))?.resourceNames ?? []),
  ].sort();
}

function rendered(objects: readonly RenderedObject[], mode: Mode): ReleaseNames {
  const controller = component(objects, 'Deployment', 'controller');
  const haproxy = component(objects, 'Deployment', 'loadbalancer');
  const volume = (deployment: RenderedObject | undefined, name: string): string | undefined =>
    deployment === undefined ? undefined : mountedSecret(deployment, name);
  return {
    controllerDeployment: controller?.metadata.name,
    haproxyDeployment: haproxy?.metadata.name,
    webhookService: component(objects, 'Service', 'controller')?.metadata.name,
    preRolloutJob: component(objects, 'Job', 'pre-rollout')?.metadata.name,
    valuesSecret: component(objects, 'Secret', 'pre-rollout')?.metadata.name,
    serverSecret: volume(haproxy, 'agent-tls'),
    clientSecret: volume(controller, 'agent-tls'),
    webhookSecret: volume(controller, 'webhook-tls'),
    // The default provider's renewal CronJob names the issuer; cert-manager's Issuer Certificate.
    issuerSecret:
      mode === 'default'
        ? flag(
            objects.find((o) => o.kind === 'CronJob'),
            'issuer-secret',
          )
        : objects
            .filter((o) => o.kind === 'Certificate')
            .map((o) => (o.body as { spec: { secretName: string; isCA?: boolean } }).spec)
            .find((spec) => spec.isCA === true && spec.secretName.endsWith('agent-ca'))?.secretName,
    readable: secretNames(component(objects, 'Role', 'pre-rollout')),
    certificates: objects
      .filter((o) => o.kind === 'Certificate')
      .map((o) => (o.body as { spec: { secretName: string } }).spec.secretName)
      .sort(),
  };
}

async function namesAgree(subject: NameCase): Promise<void> {
  const user = userValues(subject);
  const plan = planRelease(
    subject.release,
    'haptic',
    readReleaseValues(coalesceValues(user, defaults)),
  );
  const { objects } = await renderChart({ helmBin, release: subject.release, values: user });
  expect(planned(plan)).toEqual(rendered(objects, subject.mode));
}

/** One case of each length Helm accepts, fixed by the seed, run before the random ones. */
const everyLength: [NameCase][] = Array.from({ length: maxReleaseLength }, (_, index) => {
  const [sample] = fc.sample(nameCase(fc.constant(index + 1)), { numRuns: 1, seed: index + 1 });
  if (sample === undefined) throw new Error('fast-check sampled nothing');
  return [sample];
});

describe('the validator names what the chart renders', () => {
  it('for release names of every length Helm accepts, with and without overrides', async () => {
    expect(everyLength.map(([c]) => c.release.length)).toEqual(
      Array.from({ length: maxReleaseLength }, (_, index) => index + 1),
    );
    await fc.assert(
      fc.asyncProperty(nameCase(fc.integer({ min: 1, max: maxReleaseLength })), namesAgree),
      { examples: everyLength, numRuns: 30 },
    );
  }, 120_000);
});
