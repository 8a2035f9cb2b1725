import { describe, expect, it } from 'vitest';
import {
  migrationPage,
  migrationReference,
  migrationTable,
  migrationTableCommand,
} from '../../../dev/lib/migration-table.ts';

describe('the ingress-nginx migration table', () => {
  it('lists every ingress-nginx annotation as src/annotations has it', async () => {
    const { current, expected } = await migrationReference();
    expect(
      current === expected,
      `${migrationPage} is out of step with src/annotations: run ${migrationTableCommand}`,
    ).toBe(true);
  });

  it('writes one row for the names sharing a status and a note, the note read literally', () => {
    const table = migrationTable([
      { name: 'auth-type', status: 'refused', note: 'Left out.' },
      { name: 'use-regex', status: 'differently', note: 'A | B <c> *d* e_f.' },
      { name: 'auth-url', status: 'refused', note: 'Left out.' },
      { name: 'canary', status: 'unsupported', note: 'Left out.' },
    ]);
    expect(table.split('\n').slice(2)).toEqual([
      '| `auth-type`, `auth-url` | **refused** | Left out. |',
      '| `use-regex` | served differently | A \\| B \\<c> \\*d\\* e\\_f. |',
      '| `canary` | ignored | Left out. |',
    ]);
  });
});
