/**
 * `haptic ingress lint <file…>`: before an Ingress moves to this controller's class, what
 * becomes of it here. Reads Kubernetes YAML as kubectl does (several documents, the items of a
 * `kind: List`; `-` is standard input), takes every networking.k8s.io/v1 Ingress, skips the
 * other objects, and prints for each Ingress a line per ingress-nginx or haproxy.org
 * annotation (src/annotations/lint-report.ts), the paths that would be left out and what would
 * exclude it (validateIngress, as the controller runs it). Reads files only; no cluster.
 * Exit 0 every Ingress served, 1 an annotation refused or invalid, a path left out or an
 * Ingress excluded, 2 usage or a file that cannot be read or parsed.
 */
import { readFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError } from 'commander';
import { loadAll } from 'js-yaml';
import { type IngressLint, lintIngress, lintSummary } from '../annotations/lint-report.ts';
import { HapticError, describeError, errorCodes } from '../errors.ts';
import { isRecord } from '../is-record.ts';
import { isProblem } from '../validation/ingress-checks.ts';
import { readIngress } from '../validation/ingress-view.ts';
import { validateIngress } from '../validation/validate-ingress.ts';
import { yaml11Schema } from '../validation/yaml-schema.ts';

/** Largest file read: far beyond any manifest set, short of what would exhaust memory. */
const maxFileBytes = 16 * 1024 * 1024;
const ingressApiVersion = 'networking.k8s.io/v1';

interface LintFlags {
  readonly namespace: string;
}

/** One object of the files and where it was read. */
interface ObjectAt {
  readonly value: unknown;
  readonly source: string;
}

function usage(message: string): HapticError {
  return new HapticError(errorCodes.USAGE_INVALID, message);
}

function namespaceName(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) {
    throw new InvalidArgumentError('must be a lower-case DNS-1123 label such as default.');
  }
  return value;
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += bytes.length;
    if (size > maxFileBytes) break;
    chunks.push(bytes);
  }
  return size > maxFileBytes ? Buffer.alloc(maxFileBytes + 1) : Buffer.concat(chunks);
}

async function readText(path: string): Promise<string> {
  const bytes =
    path === '-'
      ? await readStdin()
      : await readFile(path).catch((error: unknown) => {
          throw usage(`${path} cannot be read (${describeError(error)}); name a YAML file.`);
        });
  if (bytes.length > maxFileBytes) {
    throw usage(`${path} is larger than ${maxFileBytes} bytes; split it.`);
  }
  return bytes.toString('utf8');
}

/** The objects of a YAML text: every document, and the items of a List in place of the List. */
function objectsOf(text: string, path: string): ObjectAt[] {
  let documents: unknown[];
  try {
    documents = loadAll(text, { schema: yaml11Schema });
  } catch (error) {
    const first = describeError(error).split('\n')[0] ?? '';
    throw usage(`${path} is not valid YAML (${first}); fix the syntax.`);
  }
  const several = documents.length > 1;
  return documents.flatMap((document, index): ObjectAt[] => {
    const where = several ? `${path}, document ${index + 1}` : path;
    if (
      isRecord(document) &&
      typeof document.kind === 'string' &&
      document.kind.endsWith('List') &&
      Array.isArray(document.items)
    ) {
      return document.items.map((item: unknown, i) => ({
        value: item,
        source: `${where}, item ${i + 1}`,
      }));
    }
    return document === null || document === undefined ? [] : [{ value: document, source: where }];
  });
}

/** The report on one Ingress object, as the controller would read and validate it. */
function lintObject(
  value: Record<string, unknown>,
  source: string,
  namespace: string,
): IngressLint {
  const view = readIngress(value, namespace);
  if (typeof view === 'string') throw new Error(view);
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const result = validateIngress(view);
  return lintIngress({
    label: `${view.namespace}/${view.name}`,
    source,
    annotations: isRecord(metadata.annotations) ? metadata.annotations : {},
    excluded: isProblem(result) ? result : undefined,
    // Findings naming no annotation are the paths left out; the annotations have lines of their own.
    leftOut: isProblem(result) ? [] : result.findings.filter((f) => f.annotations.length === 0),
  });
}

/** Reads every file first (a usage error prints no report), then reports; the exit code. */
async function runIngressLint(files: readonly string[], flags: LintFlags): Promise<number> {
  const objects: ObjectAt[] = [];
  for (const file of files) objects.push(...objectsOf(await readText(file), file));
  const reports: IngressLint[] = [];
  let skipped = 0;
  const out: string[] = [];
  for (const { value, source } of objects) {
    if (!isRecord(value) || value.kind !== 'Ingress') {
      skipped += 1;
      continue;
    }
    if (value.apiVersion !== ingressApiVersion) {
      skipped += 1;
      const version = typeof value.apiVersion === 'string' ? value.apiVersion.slice(0, 80) : '';
      out.push(
        `Ingress (${source}): skipped: ${JSON.stringify(version)} is not ${ingressApiVersion}, the only Ingress version served since Kubernetes 1.22; convert it.`,
      );
      continue;
    }
    const report = lintObject(value, source, flags.namespace);
    reports.push(report);
    out.push(...report.lines);
  }
  out.push(lintSummary(reports, skipped));
  process.stdout.write(`${out.join('\n')}\n`);
  return reports.some((report) => report.failed) ? 1 : 0;
}

export function registerIngressCommand(program: Command): void {
  const ingress = program
    .command('ingress')
    .description('Ingresses as this controller reads them, before they move to its class');
  ingress
    .command('lint')
    .description(
      'check Ingresses in YAML files: what becomes of each ingress-nginx and haproxy.org annotation, the paths left out, what excludes an Ingress; exit 0 served, 1 an annotation refused or invalid, a path left out or an Ingress excluded, 2 usage or a file that cannot be read',
    )
    .argument(
      '<files...>',
      'YAML files (several documents, kind: List, as kubectl get -o yaml writes them); - reads standard input',
    )
    .option(
      '-n, --namespace <namespace>',
      'namespace of the Ingresses that name none',
      namespaceName,
      'default',
    )
    .action(async (files: string[], flags: LintFlags) => {
      try {
        process.exitCode = await runIngressLint(files, flags);
      } catch (error) {
        process.stderr.write(`haptic ingress lint: ${describeError(error)}\n`);
        process.exitCode = 2;
      }
    });
}
