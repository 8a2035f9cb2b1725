/**
 * controller.budgets reaches `haptic run` as flags, and the chart's defaults are the
 * controller's own (one derivation: a chart default that drifted would be the budget in force).
 */
import { describe, expect, it } from 'vitest';
import { defaultModelBudgets } from '../../../src/controller/routing/model-budgets.ts';
import type { RenderedObject } from '../../../src/render/index.ts';
import { findObject, renderMode } from './chart-fixtures.ts';

interface Container {
  readonly name: string;
  readonly args?: readonly string[];
}

function controllerArgs(objects: readonly RenderedObject[]): Map<string, string> {
  const spec = findObject(objects, 'Deployment', 'haptic-controller').body.spec as {
    template: { spec: { containers: readonly Container[] } };
  };
  const container = spec.template.spec.containers.find((c) => c.name === 'controller');
  return new Map(
    (container?.args ?? [])
      .map((arg) => /^--([a-z-]+)=(.*)$/.exec(arg))
      .flatMap((match) => (match === null ? [] : [[match[1] ?? '', match[2] ?? ''] as const])),
  );
}

const mebibyte = 1024 * 1024;

describe('controller.budgets', () => {
  it("passes the controller's own defaults", async () => {
    const args = controllerArgs(await renderMode('helm', {}));
    expect(Number(args.get('server-slots-per-namespace'))).toBe(
      defaultModelBudgets.serverSlotsPerNamespace,
    );
    expect(Number(args.get('server-slots'))).toBe(defaultModelBudgets.serverSlots);
    expect(Number(args.get('certificate-mib-per-namespace')) * mebibyte).toBe(
      defaultModelBudgets.certificateBytesPerNamespace,
    );
    expect(Number(args.get('certificate-mib')) * mebibyte).toBe(
      defaultModelBudgets.certificateBytes,
    );
  });

  it('passes values as whole numbers, large ones without an exponent', async () => {
    const args = controllerArgs(
      await renderMode('helm', {
        controller: { budgets: { serverSlots: 2_000_000, certificateMiB: 64 } },
      }),
    );
    expect(args.get('server-slots')).toBe('2000000');
    expect(args.get('certificate-mib')).toBe('64');
  });

  it.each([
    ['a budget below its minimum', { serverSlots: 0 }],
    ['a fraction', { certificateMiB: 1.5 }],
    ['a key the chart does not know', { servers: 10 }],
  ])('refuses %s at the schema', async (_, budgets) => {
    await expect(renderMode('helm', { controller: { budgets } })).rejects.toThrow(
      /controller\/budgets/,
    );
  });
});
