import { describe, expect, it } from 'vitest';
import { HapticError, errorCodes } from '../errors.ts';
import { documentsOfKind, parseManifest } from './manifest.ts';

const twoObjects = `---
# Source: haptic/templates/a.yaml
apiVersion: v1
kind: Secret
metadata:
  name: one
  namespace: haptic
  labels:
    app.kubernetes.io/component: controller
---
# Source: haptic/templates/b.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: two
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-15"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      volumes:
        - name: values
          secret:
            defaultMode: 0440
`;

describe('parseManifest', () => {
  it('returns every object in helm order with its source template', () => {
    const objects = parseManifest(twoObjects);
    expect(objects.map((o) => [o.kind, o.metadata.name, o.source])).toEqual([
      ['Secret', 'one', 'haptic/templates/a.yaml'],
      ['Job', 'two', 'haptic/templates/b.yaml'],
    ]);
  });

  it('reads metadata, leaving namespace out when the object has none', () => {
    const [secret, job] = parseManifest(twoObjects);
    expect(secret?.metadata).toEqual({
      name: 'one',
      namespace: 'haptic',
      labels: { 'app.kubernetes.io/component': 'controller' },
      annotations: {},
    });
    expect(job?.metadata).not.toHaveProperty('namespace');
  });

  it('keeps a __proto__ label as a label, not as the prototype of the map', () => {
    const [secret] = parseManifest(
      '# Source: c/s.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: x, labels: {__proto__: polluted}}\n',
    );
    const labels = secret?.metadata.labels ?? {};
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
    expect(Object.hasOwn(labels, '__proto__')).toBe(true);
    expect(Object.entries(labels)).toEqual([['__proto__', 'polluted']]);
  });

  it('reads hook events, weight and delete policies, and none for release objects', () => {
    const [secret, job] = parseManifest(twoObjects);
    expect(secret?.hook).toBeUndefined();
    expect(job?.hook).toEqual({
      events: ['pre-install', 'pre-upgrade'],
      weight: -15,
      deletePolicies: ['before-hook-creation', 'hook-succeeded'],
    });
  });

  it('reads YAML 1.1 like Kubernetes does: 0440 is octal', () => {
    const [, job] = parseManifest(twoObjects);
    expect(job?.body).toMatchObject({
      spec: { template: { spec: { volumes: [{ secret: { defaultMode: 0o440 } }] } } },
    });
  });

  it("reads a large number as helm's toYaml prints it (Go's 1e+06) as a number", () => {
    const [object] = parseManifest(
      '# Source: c/t.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {}\nspec: {limit: 1e+06, ratio: 2.5e-1}\n',
    );
    expect(object?.body).toMatchObject({ spec: { limit: 1_000_000, ratio: 0.25 } });
  });

  it('names each object by the last # Source: line before it, past empty documents', () => {
    const objects = parseManifest(
      [
        '---\n# Source: c/templates/empty.yaml\n',
        '---\n# Source: c/templates/a.yaml\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: A\nmetadata: {name: a}\n',
        '---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n',
      ].join(''),
    );
    expect(objects.map((o) => [o.kind, o.source])).toEqual([
      ['A', 'c/templates/b.yaml'],
      ['B', 'an unnamed template'],
    ]);
  });

  it('skips empty documents and returns nothing for empty output', () => {
    expect(parseManifest('')).toEqual([]);
    expect(parseManifest('---\n# Source: x/templates/empty.yaml\n---\n')).toEqual([]);
  });

  const invalid: readonly (readonly [string, string, RegExp])[] = [
    [
      'a document that is not a map',
      '# Source: c/t.yaml\n- a\n',
      /object from c\/t\.yaml is not a map/,
    ],
    ['an object without kind', 'apiVersion: v1\nmetadata: {name: x}\n', /has no kind/],
    ['an object without apiVersion', 'kind: Secret\nmetadata: {name: x}\n', /has no apiVersion/],
    [
      'an object without a name',
      'apiVersion: v1\nkind: Secret\nmetadata: {}\n',
      /\(Secret\) has no metadata\.name/,
    ],
    [
      'a label that is not a string',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: x, labels: {on: yes}}\n',
      /Secret x from an unnamed template: metadata\.labels\.true must be a string, not true; quote it/,
    ],
    [
      'a hook weight that is not an integer',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: x, annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "1.5"}}\n',
      /helm\.sh\/hook-weight "1\.5" is not an integer/,
    ],
    ['broken YAML', '# Source: c/broken.yaml\nkind: [\n', /invalid YAML in c\/broken\.yaml/],
    [
      'broken YAML in a later template, named by its own source',
      '# Source: c/good.yaml\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n# Source: c/bad.yaml\nkind: [\n',
      /invalid YAML in c\/bad\.yaml: [a-z][^()\n]*$/,
    ],
    [
      'an alias (helm never writes one; an expanded alias can be exponential)',
      '# Source: c/alias.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: &n x, labels: {a: *n}}\n',
      /invalid YAML in c\/alias\.yaml: aliases exceeded/,
    ],
    [
      'an unknown tag',
      '# Source: c/tag.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: !custom x}\n',
      /invalid YAML in c\/tag\.yaml: unknown scalar tag/,
    ],
    [
      'duplicate keys',
      'apiVersion: v1\nkind: Secret\nkind: ConfigMap\nmetadata: {name: x}\n',
      /invalid YAML/,
    ],
  ];
  it.each(invalid)('rejects %s with RENDER_OUTPUT_INVALID', (_, manifest, message) => {
    let thrown: unknown;
    try {
      parseManifest(manifest);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HapticError);
    expect(thrown).toMatchObject({ code: errorCodes.RENDER_OUTPUT_INVALID });
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('documentsOfKind', () => {
  const withConfig = `${twoObjects}---
# Source: haptic/templates/c.yaml
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata:
  name: three
spec:
  haproxyConfig:
    template: |
      kind: Secret
      --- not a marker when indented
---
# Source: haptic/templates/d.yaml
apiVersion: v1
kind: Secret
metadata:
  name: four
`;

  it('parses only the documents of the kind, each as the whole parse has it', () => {
    const early = documentsOfKind(withConfig, 'HAProxyTemplateConfig');
    const whole = parseManifest(withConfig).filter((o) => o.kind === 'HAProxyTemplateConfig');
    expect(early.map((o) => [o.metadata.name, o.source])).toEqual([
      ['three', 'haptic/templates/c.yaml'],
    ]);
    expect(early).toEqual(whole);
  });

  it('keeps every document of the kind in order, and a kind line inside a scalar is not one', () => {
    expect(documentsOfKind(withConfig, 'Secret').map((o) => o.metadata.name)).toEqual([
      'one',
      'four',
    ]);
    expect(documentsOfKind(withConfig, 'Deployment')).toEqual([]);
  });

  it('throws as parseManifest does for a broken document of the kind', () => {
    const broken = `---\n# Source: haptic/templates/e.yaml\nkind: Secret\nmetadata: [\n`;
    expect(() => documentsOfKind(broken, 'Secret')).toThrow(
      /helm rendered invalid YAML in haptic\/templates\/e.yaml/,
    );
  });
});
