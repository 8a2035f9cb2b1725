import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
import { readEmbeddedCrds } from '../../../src/api/embedded-crds.ts';
import { createTestNamespace, kubectl, serviceAccountKubeconfig } from '../../support/cluster.ts';

const crd = 'haproxytemplateconfigs.haproxy-haptic.org';

function hapticCrdsApply(kubeconfig: string) {
  return execa(process.execPath, [join(projectRoot, 'dist/cli/main.js'), 'crds', 'apply'], {
    env: { KUBECONFIG: kubeconfig },
    reject: false,
  });
}

describe('haptic crds apply', () => {
  it('creates, restores and keeps the embedded CRD under the CRD Job RBAC only', async () => {
    const ns = await createTestNamespace('crds');
    // The chart's CRD hook RBAC: create any CRD; get/patch only its own.
    const rbac = [
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: crds, namespace: ${ns}}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${ns}-crds}\nrules:\n- {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [create]}\n- {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], resourceNames: [${crd}], verbs: [get, patch]}`,
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${ns}-crds}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${ns}-crds}\nsubjects: [{kind: ServiceAccount, name: crds, namespace: ${ns}}]`,
    ].join('\n---\n');
    expect((await kubectl(['apply', '-f', '-'], rbac)).exitCode).toBe(0);
    const kubeconfig = await serviceAccountKubeconfig(ns, 'crds');

    const first = await hapticCrdsApply(kubeconfig);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain(`Applied CustomResourceDefinition ${crd}.`);
    const established = await kubectl([
      'wait',
      '--for=condition=established',
      `crd/${crd}`,
      '--timeout=30s',
    ]);
    expect(established.exitCode).toBe(0);

    // Someone removes one of the CRD's labels; the next apply restores it. (The CRD is shared
    // by every test of the run, so the drift chosen here must not disturb concurrent installs.)
    const label = 'app.kubernetes.io/part-of';
    expect((await kubectl(['label', 'crd', crd, `${label}-`])).exitCode).toBe(0);
    expect((await hapticCrdsApply(kubeconfig)).exitCode).toBe(0);
    const restored = await kubectl(['get', 'crd', crd, '-o', 'jsonpath={.metadata.labels}']);
    expect(JSON.parse(restored.stdout)).toMatchObject({ [label]: 'haptic' });

    // Exactly the chart's CRD reached the API (nothing dropped on the way), so Helm 4's
    // server-side apply of crds/ on a later install co-owns the fields instead of conflicting.
    const live = await kubectl(['get', 'crd', crd, '-o', 'json']);
    const [embedded] = readEmbeddedCrds();
    expect((JSON.parse(live.stdout) as { spec: unknown }).spec).toMatchObject(
      embedded?.manifest.spec as object,
    );
    const helmApply = await kubectl(
      ['apply', '--server-side', '--field-manager=helm', '-f', '-'],
      JSON.stringify(embedded?.manifest),
    );
    expect(helmApply.stderr).toBe('');

    // Applying again changes nothing.
    const before = await kubectl(['get', 'crd', crd, '-o', 'jsonpath={.metadata.resourceVersion}']);
    expect((await hapticCrdsApply(kubeconfig)).exitCode).toBe(0);
    const after = await kubectl(['get', 'crd', crd, '-o', 'jsonpath={.metadata.resourceVersion}']);
    expect(after.stdout).toBe(before.stdout);
  });

  it('fails with one line naming the CRD and the RBAC fix when it may not apply', async () => {
    const ns = await createTestNamespace('crds-denied');
    expect((await kubectl(['create', 'serviceaccount', 'nobody', '-n', ns])).exitCode).toBe(0);
    const denied = await hapticCrdsApply(await serviceAccountKubeconfig(ns, 'nobody'));
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr).toMatch(
      new RegExp(
        `^haptic crds apply: Applying CustomResourceDefinition ${crd} failed \\(HTTP 403: .*forbidden.*\\); check that the Job's ServiceAccount may create, get and patch it\\.$`,
      ),
    );
  });

  it('fails with the fix when the kubeconfig has no cluster', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'no-kubeconfig-'));
    writeFileSync(join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
    const result = await hapticCrdsApply(join(dir, 'kubeconfig'));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('has no current context with a cluster; set current-context.');
  });
});
