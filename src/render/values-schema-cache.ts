/**
 * The chart's values schema check, compiled by ajv once per schema and installation rather
 * than once per process: ajv's standalone code for the schema is kept in the package cache
 * (package-cache.ts), so a later process loads the kept code instead of loading ajv and
 * compiling, which was the largest single cost of `haptic preflight` after Node's start-up.
 *
 * The file's name is a SHA-256 of everything the code depends on (the schema, ajv's version
 * and options, the paths of ajv's runtime helpers it requires), so a changed chart or ajv never
 * loads a stale validator. The code is executed, which is why it is only ever kept in the
 * package's own directory (V8's compile cache, by contrast, is checked against the source it
 * belongs to).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type { ValidateFunction } from 'ajv';
import {
  type ValuesSchemaCheck,
  compileSchemaValidator,
  validatorCodeIdentity,
  valuesSchemaCheck,
} from '../validation/values-schema.ts';
import { keepInPackageCache, packageCacheDir } from './package-cache.ts';

const requireHere = createRequire(import.meta.url);

/** ajv's standalone module exports the validator function itself. */
function isValidator(value: unknown): value is ValidateFunction {
  return typeof value === 'function';
}

/**
 * ajv's standalone code requires its runtime helpers by package name; resolved to this
 * installation's files by paths relative to the cache directory, the kept file loads wherever
 * the cache directory is, and still does when the installation moves with it (a cache written
 * where the image is assembled, read in the installed tree).
 */
function withResolvedRequires(dir: string, code: string): string {
  return code.replace(
    /require\("(ajv\/dist\/runtime\/[a-z0-9]+)"\)/g,
    (_, name: string) => `require(${JSON.stringify(relativeTo(dir, requireHere.resolve(name)))})`,
  );
}

/** `file` as a relative specifier (`./…` or `../…`) from `dir`. */
function relativeTo(dir: string, file: string): string {
  const path = relative(dir, file);
  return path.startsWith('../') ? path : `./${path}`;
}

function cacheFile(dir: string, schema: object): string {
  const key = createHash('sha256')
    .update(validatorCodeIdentity())
    .update(relativeTo(dir, requireHere.resolve('ajv')))
    .update(JSON.stringify(schema))
    .digest('hex')
    .slice(0, 32);
  return join(dir, `values-schema-${key}.cjs`);
}

/**
 * The check of `schema`: its validator loaded from `cacheDir` when kept there, else compiled
 * by ajv and kept there (when the directory can be written). No `cacheDir`: always compiled.
 */
export function loadValuesSchemaCheck(
  schema: object,
  cacheDir: string | undefined = packageCacheDir(),
): ValuesSchemaCheck {
  if (cacheDir === undefined)
    return valuesSchemaCheck(compileSchemaValidator(schema, false).validate);
  const file = cacheFile(cacheDir, schema);
  try {
    const kept: unknown = requireHere(file);
    if (isValidator(kept)) return valuesSchemaCheck(kept);
  } catch {
    // Not kept yet, or unreadable: compiled below.
  }
  const { validate, code } = compileSchemaValidator(schema, true);
  if (code !== undefined) keepInPackageCache(cacheDir, file, withResolvedRequires(cacheDir, code));
  return valuesSchemaCheck(validate);
}
