import { describe, expect, it } from 'vitest';
import {
  chartDir,
  chartModeNames,
  chartModes,
  helmBinaries,
  runHelm,
  writeValuesFile,
} from './chart-fixtures.ts';

describe.each(helmBinaries)('%s lint --strict', (binary) => {
  it.each(chartModeNames)('is clean in %s mode', async (mode) => {
    const values = writeValuesFile(chartModes[mode]);
    const result = await runHelm(binary, [
      'lint',
      chartDir,
      '--strict',
      '--namespace',
      'haptic',
      '--values',
      values,
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.stdout).not.toMatch(/\[(INFO|WARNING|ERROR)\]/);
    expect(result.exitCode).toBe(0);
  });
});
