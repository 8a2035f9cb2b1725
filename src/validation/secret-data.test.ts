import { describe, expect, it } from 'vitest';
import { readSecretObject } from './secret-data.ts';

describe('readSecretObject', () => {
  it('folds stringData into data, base64-encoded, over a data key of the same name', () => {
    const secret = readSecretObject(
      {
        kind: 'Secret',
        metadata: { name: 's' },
        data: { a: 'eA==', b: 'eQ==' },
        stringData: { b: 'z' },
      },
      'ns',
    );
    expect(secret).toMatchObject({ name: 's', namespace: 'ns', data: { a: 'eA==', b: 'eg==' } });
  });

  it('keeps __proto__ keys of data, stringData and labels as keys, never as a prototype', () => {
    const only: unknown = JSON.parse('{"kind":"Secret","stringData":{"__proto__":"y"}}');
    const fromStringData = readSecretObject(only, 'ns');
    if (typeof fromStringData === 'string') throw new Error(fromStringData);
    expect(Object.entries(fromStringData.data)).toEqual([['__proto__', 'eQ==']]);

    // JSON.parse makes `__proto__` an own key, as an AdmissionReview's object arrives.
    const object: unknown = JSON.parse(
      '{"kind":"Secret","metadata":{"name":"s","labels":{"__proto__":"l"}},"data":{"__proto__":"eA=="},"stringData":{"__proto__":"y","constructor":"z"}}',
    );
    const secret = readSecretObject(object, 'ns');
    if (typeof secret === 'string') throw new Error(secret);
    expect(Object.getPrototypeOf(secret.data)).toBe(Object.prototype);
    expect(Object.entries(secret.data)).toEqual([
      ['__proto__', 'eQ=='],
      ['constructor', 'eg=='],
    ]);
    expect(Object.entries(secret.labels)).toEqual([['__proto__', 'l']]);
  });

  it('is a sentence for anything but a Secret', () => {
    expect(readSecretObject({ kind: 'ConfigMap' }, 'ns')).toBe('The object is not a Secret.');
  });
});
