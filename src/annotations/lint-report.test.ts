import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  annotationsByName,
  haproxyPrefix,
  nginxPrefix,
  refusedAnnotations,
} from './annotation-catalog.ts';
import { annotationReasons, readIngressOptions } from './ingress-options.ts';
import {
  type IngressLintInput,
  annotationVerdict,
  lintIngress,
  lintSummary,
  shownValue,
} from './lint-report.ts';
import { nginxAnnotationNames } from './nginx-annotations.ts';

const plain: IngressLintInput = {
  label: 'shop/web',
  source: 'web.yaml',
  annotations: {},
  excluded: undefined,
  leftOut: [],
};

/** The verdict readIngressOptions gives the annotation, in the lint's words. */
function optionsVerdict(name: string, value: string): string {
  const { findings } = readIngressOptions({ [name]: value }, 'shop/web');
  const finding = findings.find((candidate) => candidate.annotations.includes(name));
  if (finding === undefined) return 'served';
  return {
    [annotationReasons.AnnotationInvalid]: 'invalid',
    [annotationReasons.AnnotationRefused]: 'refused',
    [annotationReasons.AnnotationIgnored]: 'ignored',
  }[finding.reason];
}

/** Every name the catalog, its refusals and the migration table know, and a few it does not. */
const everyName = [
  ...annotationsByName.keys(),
  ...refusedAnnotations.map(
    (refused) => `${refused.name}${refused.name.endsWith('-') ? 'url' : ''}`,
  ),
  ...nginxAnnotationNames.map((name) => `${nginxPrefix}${name}`),
  `${nginxPrefix}constructor`,
  `${haproxyPrefix}cors-enable`,
];
const sampleValues = [
  '',
  'true',
  'false',
  '60',
  '5s',
  '1m',
  '0',
  '10.0.0.0/8',
  'https://a.example/',
  '/app',
  '/$1',
  'huge',
  'HTTPS',
  'cookie',
  'x y',
];

describe('the verdict on one annotation', () => {
  it('is the verdict readIngressOptions gives, over every known name and sample values', () => {
    for (const name of everyName) {
      for (const value of sampleValues) {
        const { verdict } = annotationVerdict(name, value);
        expect(verdict === 'served differently' ? 'served' : verdict, `${name}=${value}`).toBe(
          optionsVerdict(name, value),
        );
      }
    }
  });

  it('is the verdict readIngressOptions gives for any value of a catalog name', () => {
    const names = [...annotationsByName.keys()];
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.string({ maxLength: 40 }), (name, value) => {
        const { verdict } = annotationVerdict(name, value);
        expect(verdict === 'served differently' ? 'served' : verdict).toBe(
          optionsVerdict(name, value),
        );
      }),
    );
  });

  it('says what the controller does, the expected form, or why it is refused', () => {
    expect(annotationVerdict(`${nginxPrefix}proxy-body-size`, 'huge')).toEqual({
      name: `${nginxPrefix}proxy-body-size`,
      verdict: 'invalid',
      says: 'Expected bytes with an optional k, m or g ("1m", "512k", "0" for no limit); the Ingress\'s routes are left out until the value is fixed.',
    });
    const snippet = annotationVerdict(`${nginxPrefix}configuration-snippet`, 'more_set_headers');
    expect(snippet.verdict).toBe('refused');
    expect(snippet.says).toMatch(/^The Ingress's routes are left out: it is free text/);
    expect(annotationVerdict(`${nginxPrefix}use-regex`, 'true').verdict).toBe('served differently');
    expect(annotationVerdict(`${nginxPrefix}app-root`, '/app')).toMatchObject({
      verdict: 'served',
      says: 'Requests for / are redirected (302) to this path.',
    });
    expect(annotationVerdict(`${nginxPrefix}proxy-buffering`, 'on')).toMatchObject({
      verdict: 'ignored',
    });
    expect(annotationVerdict(`${nginxPrefix}proxy-buffering`, 'on').says).toContain('HAProxy');
    expect(annotationVerdict(`${haproxyPrefix}whatever`, 'x').says).toBe(
      'This controller does not read it; the routes are served without it.',
    );
  });

  it('finds a value that is not a string invalid, as the API server would refuse it', () => {
    const quoted = annotationVerdict(`${nginxPrefix}ssl-redirect`, true);
    expect(quoted.verdict).toBe('invalid');
    expect(quoted.says).toContain('a boolean (true), not a string');
    expect(annotationVerdict(`${nginxPrefix}proxy-buffering`, 10).says).toContain('a number (10)');
  });
});

describe('the report on one Ingress', () => {
  it('passes an Ingress migrating with served annotations, one line each, sorted', () => {
    const report = lintIngress({
      ...plain,
      annotations: {
        [`${nginxPrefix}use-regex`]: 'true',
        [`${nginxPrefix}rewrite-target`]: '/$2',
        'kubernetes.io/ingress.class': 'nginx',
        [`${nginxPrefix}ssl-redirect`]: 'false',
      },
    });
    expect(report.failed).toBe(false);
    expect(report.lines[0]).toBe('Ingress shop/web (web.yaml): served');
    expect(report.lines.slice(1).map((text) => text.split('=')[0])).toEqual([
      `  served differently  ${nginxPrefix}rewrite-target`,
      `  served differently  ${nginxPrefix}ssl-redirect`,
      `  served differently  ${nginxPrefix}use-regex`,
    ]);
  });

  it('fails for a refused or invalid annotation, saying the routes are left out', () => {
    const report = lintIngress({
      ...plain,
      annotations: {
        [`${nginxPrefix}proxy-body-size`]: 'huge',
        [`${nginxPrefix}proxy-buffering`]: 'on',
      },
    });
    expect(report.failed).toBe(true);
    expect(report.lines[0]).toBe('Ingress shop/web (web.yaml): routes left out');
    expect(report.lines[1]).toMatch(
      /^ {2}invalid {13}nginx\.ingress\.kubernetes\.io\/proxy-body-size="huge": Expected bytes/,
    );
    expect(report.lines[2]).toMatch(
      /^ {2}ignored {13}nginx\.ingress\.kubernetes\.io\/proxy-buffering="on": /,
    );
  });

  it('passes with ignored annotations, saying so', () => {
    const report = lintIngress({
      ...plain,
      annotations: { [`${nginxPrefix}proxy-buffering`]: 'on' },
    });
    expect(report).toMatchObject({ failed: false });
    expect(report.lines[0]).toBe('Ingress shop/web (web.yaml): served, some annotations ignored');
  });

  it('fails for a path left out or the Ingress excluded, with their sentences', () => {
    const leftOut = lintIngress({
      ...plain,
      leftOut: [{ field: 'spec.rules[0].http.paths[0].path', message: 'That path is left out.' }],
    });
    expect(leftOut.failed).toBe(true);
    expect(leftOut.lines).toEqual([
      'Ingress shop/web (web.yaml): some paths left out',
      '  left out            That path is left out.',
    ]);
    const excluded = lintIngress({
      ...plain,
      excluded: { field: 'spec.rules[0].host', message: 'The host is not a host.' },
    });
    expect(excluded.failed).toBe(true);
    expect(excluded.lines).toEqual([
      'Ingress shop/web (web.yaml): excluded',
      '  excluded            The host is not a host.',
    ]);
  });

  it('bounds every value to 80 characters and prints no control character', () => {
    const long = `${'a'.repeat(200)}\u001b[2J\u202e`;
    expect(shownValue(long)).toBe(JSON.stringify(`${'a'.repeat(80)}…`));
    const report = lintIngress({
      ...plain,
      label: 'shop/\u001b[31mweb',
      annotations: {
        [`${nginxPrefix}x-forwarded-prefix`]: `\u009b${long}`,
        [`${nginxPrefix}a\u001bb`]: 'v',
      },
      excluded: { field: 'spec', message: `bad \u0007 ${'m'.repeat(1000)}` },
    });
    for (const text of report.lines) {
      expect(text).not.toMatch(/[\p{Cc}\u202e]/u);
      expect(text.length).toBeLessThan(700);
    }
    expect(report.lines[0]).toContain('shop/?[31mweb');
  });
});

describe('the summary', () => {
  it('counts the Ingresses that pass and fail, and the objects skipped', () => {
    const pass = lintIngress(plain);
    const fail = lintIngress({ ...plain, excluded: { field: 'spec', message: 'No.' } });
    expect(lintSummary([pass, fail, pass], 2)).toBe(
      '3 Ingresses checked: 2 pass, 1 with an annotation refused or invalid, a path left out or the whole Ingress excluded; 2 other objects skipped.',
    );
    expect(lintSummary([], 1)).toBe(
      'No networking.k8s.io/v1 Ingress found; 1 other object skipped.',
    );
  });
});
