import { describe, expect, it } from 'vitest';
import {
  configurationPage,
  configurationReference,
  valuesTableCommand,
} from '../../../dev/lib/values-table.ts';

describe('the configuration reference', () => {
  it('lists every chart value as chart/values.schema.json has it', async () => {
    const { current, expected } = await configurationReference();
    expect(
      current === expected,
      `${configurationPage} is out of step with chart/values.schema.json: run ${valuesTableCommand}`,
    ).toBe(true);
  });
});
