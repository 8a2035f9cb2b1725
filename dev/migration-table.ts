// node dev/migration-table.ts
// Writes the annotation table of docs/ingress-migration.md (every ingress-nginx annotation, its
// status here, what happens or what to do instead) from src/annotations/nginx-annotations.ts,
// between the page's two marker comments (dev/lib/migration-table.ts). Run it after changing
// the annotation catalog; the unit test test/unit/docs/migration-table.test.ts fails until the
// page matches.
import { writeFileSync } from 'node:fs';
import { migrationPage, migrationReference } from './lib/migration-table.ts';

const { file, current, expected } = await migrationReference();
if (current === expected) {
  process.stdout.write(`${migrationPage} is up to date\n`);
} else {
  writeFileSync(file, expected);
  process.stdout.write(`${migrationPage} rewritten from src/annotations\n`);
}
