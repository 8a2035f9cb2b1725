// node dev/values-table.ts
// Writes the configuration reference table of docs/configuration.md (value path, type, default,
// description) from chart/values.schema.json, between the page's two marker comments
// (dev/lib/values-table.ts). Run it after changing a chart value; the unit test
// test/unit/docs/values-table.test.ts fails until the page matches the schema.
import { writeFileSync } from 'node:fs';
import { configurationPage, configurationReference } from './lib/values-table.ts';

const { file, current, expected } = await configurationReference();
if (current === expected) {
  process.stdout.write(`${configurationPage} is up to date\n`);
} else {
  writeFileSync(file, expected);
  process.stdout.write(`${configurationPage} rewritten from chart/values.schema.json\n`);
}
