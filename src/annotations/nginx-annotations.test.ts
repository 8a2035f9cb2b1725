import { describe, expect, it } from 'vitest';
import { annotationsByName, nginxPrefix, refusalOf } from './annotation-catalog.ts';
import {
  nginxAnnotation,
  nginxAnnotationNames,
  nginxAnnotations,
  nginxTableProblems,
} from './nginx-annotations.ts';

describe('the ingress-nginx annotation table', () => {
  it('has a status and a note for every name, none missing a note of why', () => {
    expect(nginxTableProblems()).toEqual([]);
    expect(nginxAnnotations.length).toBeGreaterThanOrEqual(130);
    expect(nginxAnnotations.map((entry) => entry.name)).toEqual(nginxAnnotationNames);
  });

  it('lists every nginx name the catalog reads, and names in order without duplicates', () => {
    for (const full of annotationsByName.keys()) {
      if (full.startsWith(nginxPrefix)) {
        expect(nginxAnnotationNames).toContain(full.slice(nginxPrefix.length));
      }
    }
    expect([...new Set(nginxAnnotationNames)].sort()).toEqual(nginxAnnotationNames);
  });

  it('takes every status from the catalog: refused as refusalOf, served as it reads', () => {
    for (const { name, status } of nginxAnnotations) {
      const full = `${nginxPrefix}${name}`;
      const expected =
        refusalOf(full) !== undefined
          ? ['refused']
          : annotationsByName.has(full)
            ? ['supported', 'differently']
            : ['unsupported'];
      expect(expected, name).toContain(status);
    }
  });

  it('writes each note as one sentence', () => {
    for (const { name, note } of nginxAnnotations) {
      expect(note, name).toMatch(/^[A-Z$a-z].*\.$/s);
      expect(note, name).not.toContain('\n');
      expect(note.length, name).toBeLessThan(400);
    }
  });

  it('says snippets and authentication leave the routes out, with the catalog’s reason', () => {
    for (const name of ['configuration-snippet', 'server-snippet', 'auth-url', 'auth-tls-secret']) {
      const entry = nginxAnnotation(name);
      expect(entry.status, name).toBe('refused');
      expect(entry.note).toContain("The Ingress's routes are left out: ");
      expect(entry.note).toContain(refusalOf(`${nginxPrefix}${name}`)?.why);
    }
  });

  it('serves the usual migration annotations, saying how where it differs', () => {
    expect(nginxAnnotation('proxy-read-timeout')).toMatchObject({ status: 'differently' });
    expect(nginxAnnotation('proxy-read-timeout').note).toContain('timeout server');
    expect(nginxAnnotation('proxy-send-timeout').note).toContain('the larger of the two wins');
    expect(nginxAnnotation('use-regex').note).toContain('case-insensitively');
    expect(nginxAnnotation('app-root').status).toBe('supported');
    expect(nginxAnnotation('app-root').note).toBe(
      'Requests for / are redirected (302) to this path.',
    );
  });

  it('says why the others are not served and what to do instead', () => {
    expect(nginxAnnotation('canary-by-header-pattern')).toMatchObject({ status: 'unsupported' });
    expect(nginxAnnotation('canary-by-header-pattern').note).toContain('Not served yet');
    expect(nginxAnnotation('ssl-passthrough')).toMatchObject({ status: 'refused' });
    expect(nginxAnnotation('ssl-passthrough').note).toContain('not served by this controller yet');
    expect(nginxAnnotation('enable-modsecurity').note).toMatch(/^Not planned: .*sidecar/);
    expect(nginxAnnotation('enable-opentelemetry').note).toMatch(/^Not planned: /);
  });

  it('has a note for a name ingress-nginx does not have either, the prototype’s names too', () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      expect(nginxAnnotation(name).note, name).toBe(
        'This controller does not read it; the routes are served without it.',
      );
    }
    expect(nginxAnnotation('ssl-redirects')).toEqual({
      name: 'ssl-redirects',
      status: 'unsupported',
      note: 'This controller does not read it; the routes are served without it.',
    });
  });
});
