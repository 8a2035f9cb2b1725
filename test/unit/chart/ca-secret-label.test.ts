import { describe, expect, it } from 'vitest';
import { certificateAuthorityLabel } from '../../../src/controller/watch/watched-secrets.ts';
import { chartModeNames, chartModes, renderMode } from './chart-fixtures.ts';

interface CertificateSpec {
  readonly isCA?: boolean;
  readonly secretName: string;
  readonly secretTemplate?: { readonly labels?: Readonly<Record<string, string>> };
}

/** Every cert-manager Certificate the chart renders in a mode, by name. */
async function certificates(
  mode: (typeof chartModeNames)[number],
): Promise<readonly { readonly name: string; readonly spec: CertificateSpec }[]> {
  const objects = await renderMode('helm', chartModes[mode]);
  return objects
    .filter((o) => o.apiVersion === 'cert-manager.io/v1' && o.kind === 'Certificate')
    .map((o) => ({ name: o.metadata.name, spec: o.body.spec as CertificateSpec }));
}

describe("cert-manager CA Secrets stay out of the controller's Secret informer", () => {
  it('every CA Certificate labels its Secret, in every mode', async () => {
    const cas = [];
    for (const mode of chartModeNames) {
      for (const certificate of await certificates(mode)) {
        if (certificate.spec.isCA === true) cas.push({ mode, ...certificate });
      }
    }
    // The agent CA (certManager.createIssuer) and the webhook CA.
    expect(new Set(cas.map((ca) => ca.name))).toEqual(
      new Set(['haptic-agent-ca', 'haptic-webhook-ca']),
    );
    for (const ca of cas) {
      expect(ca.spec.secretTemplate?.labels, `${ca.mode}: ${ca.name}`).toEqual({
        [certificateAuthorityLabel]: 'true',
      });
    }
  });

  it.each(chartModeNames)(
    'in %s mode no leaf Certificate is hidden (identities, webhook, default certificate)',
    async (mode) => {
      for (const certificate of await certificates(mode)) {
        if (certificate.spec.isCA === true) continue;
        expect(certificate.spec.secretTemplate, certificate.name).toBeUndefined();
      }
    },
  );
});
