import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../dev/lib/tools.ts';
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

    // Someone edits the CRD's served versions away; the next apply restores them.
    const patched = await kubectl([
      'patch',
      'crd',
      crd,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/versions/0/served","value":false}]',
    ]);
    expect(patched.exitCode).toBe(0);
    expect((await hapticCrdsApply(kubeconfig)).exitCode).toBe(0);
    const served = await kubectl(['get', 'crd', crd, '-o', 'jsonpath={.spec.versions[0].served}']);
    expect(served.stdout).toBe('true');

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
