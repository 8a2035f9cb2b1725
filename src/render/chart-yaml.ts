/**
 * A chart's own YAML files (Chart.yaml, values.yaml) read as helm reads them, YAML 1.1. The
 * parse is kept as JSON in the package cache (package-cache.ts) under a SHA-256 of the text
 * and the YAML reader's version, so a later process reads JSON instead of parsing YAML: for
 * `haptic preflight` that parse of the embedded chart cost more CPU than anything else it did
 * while helm rendered. A parse that JSON cannot carry unchanged (`.inf`, `.nan`) is not kept.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load } from 'js-yaml';
import { yaml11Schema, yaml11SchemaFile } from '../validation/yaml-schema.ts';
import { keepInPackageCache, packageCacheDir } from './package-cache.ts';

function parse(text: string): unknown {
  return load(text, { schema: yaml11Schema });
}

/** The reader in the cache key (js-yaml's version, the schema's code): a new one parses anew. */
function parserIdentity(): string {
  const { version } = createRequire(import.meta.url)('js-yaml/package.json') as { version: string };
  return JSON.stringify({ 'js-yaml': version, schema: readFileSync(yaml11SchemaFile, 'utf8') });
}

/**
 * The value of the YAML file at `path`; read or parse failures are thrown as they come. With
 * `cacheDir`, a parse kept there is read instead, and a new one is kept there when possible.
 */
export function readChartYaml(
  path: string,
  cacheDir: string | undefined = packageCacheDir(),
): unknown {
  const text = readFileSync(path, 'utf8');
  if (cacheDir === undefined) return parse(text);
  const key = createHash('sha256')
    .update(parserIdentity())
    .update('\0')
    .update(text)
    .digest('hex')
    .slice(0, 32);
  const file = join(cacheDir, `chart-yaml-${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    // Not kept yet, or unreadable: parsed below.
  }
  const parsed = parse(text);
  const json = JSON.stringify(parsed);
  if (isDeepStrictEqual(JSON.parse(json), parsed)) {
    keepInPackageCache(cacheDir, file, json);
  }
  return parsed;
}
