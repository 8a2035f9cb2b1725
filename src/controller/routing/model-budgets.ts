/**
 * What one namespace, and all together, may put into the configuration every tenant shares:
 * server slots (each a `server` line HAProxy holds in memory, about 4 KiB apiece in
 * `haproxy -c` and in every worker) and certificate bytes (files every agent receives, within
 * an apply's 48 MiB). Each item alone stays within its own limits (4,096 endpoints per backend,
 * bounded PEM), but many of them made the whole configuration fail for everyone: 18 Services
 * of 4,096 endpoints ran `haproxy -c` out of memory, 200 TLS Secrets of 261 KB went past the
 * agents' total.
 *
 * The budgets are checked on the model, before rendering. Over a budget, the newest objects
 * are left out first — a backend keeps its name and routes but no endpoints (HAProxy answers
 * 503), a certificate's hosts get the default certificate — with a BudgetExceeded warning on
 * each Ingress that uses them; the rest is delivered. Ages are those of the oldest Ingress using
 * the object, so what served first keeps serving. Pure.
 */
import { objectKey } from './cluster-snapshot.ts';
import { type ModelWarning, ingressEventReasons } from './ingress-event-reasons.ts';
import type { ModelBackend, ModelCertificate, ModelRoute } from './model-types.ts';
import { serverSlots } from './server-slots.ts';
import type { ValidIngress } from '../../validation/validate-ingress.ts';

export interface ModelBudgets {
  /** Server slots of one namespace's backends (a Service of 4,096 endpoints takes 8,192). @default 8192 */
  readonly serverSlotsPerNamespace: number;
  /** Server slots of all backends. @default 49152 */
  readonly serverSlots: number;
  /** Bytes of one namespace's certificate files. @default 1 MiB */
  readonly certificateBytesPerNamespace: number;
  /** Bytes of all certificate files (the default certificate aside). @default 4 MiB */
  readonly certificateBytes: number;
  /** Why the totals are lower than configured, for messages (halvedTotals). */
  readonly lowered?: string;
}

const mebibyte = 1024 * 1024;

export const defaultModelBudgets: ModelBudgets = {
  serverSlotsPerNamespace: 8_192,
  serverSlots: 49_152,
  certificateBytesPerNamespace: 1 * mebibyte,
  certificateBytes: 4 * mebibyte,
};

/**
 * The budgets with their totals halved: what a render tries next when `haproxy -c` ran out of
 * memory with the configured ones (the configuration, not a line of it, was too large).
 */
export function halvedTotals(budgets: ModelBudgets): ModelBudgets {
  return {
    ...budgets,
    serverSlots: Math.max(1, Math.floor(budgets.serverSlots / 2)),
    certificateBytes: Math.max(1, Math.floor(budgets.certificateBytes / 2)),
    lowered: 'halved, as haproxy -c ran out of memory with more',
  };
}

/** Where a budget is set, for messages. */
const budgetValues = {
  serverSlotsPerNamespace: 'controller.budgets.serverSlotsPerNamespace',
  serverSlots: 'controller.budgets.serverSlots',
  certificateBytesPerNamespace: 'controller.budgets.certificateMiBPerNamespace',
  certificateBytes: 'controller.budgets.certificateMiB',
} as const satisfies Record<Exclude<keyof ModelBudgets, 'lowered'>, string>;

/** Where a budget comes from, for messages: its value, and why it is lower now. */
function sourceOf(key: keyof typeof budgetValues, budgets: ModelBudgets): string {
  const total = key === 'serverSlots' || key === 'certificateBytes';
  return total && budgets.lowered !== undefined
    ? `${budgetValues[key]}, ${budgets.lowered}`
    : budgetValues[key];
}

/**
 * One object a budget counts: its namespace, what it takes, what it still takes when left out,
 * and its age (lower is older).
 */
interface Item<T> {
  readonly value: T;
  readonly namespace: string;
  readonly cost: number;
  readonly kept: number;
  readonly age: number;
}

/**
 * The items to leave out so that each namespace stays within `perNamespace` and all within
 * `total`, newest first; the budget each went over. Nothing when all fit.
 */
function overBudget<T>(
  items: readonly Item<T>[],
  perNamespace: number,
  total: number,
): Map<T, 'namespace' | 'total'> {
  const out = new Map<T, 'namespace' | 'total'>();
  const byNamespace = new Map<string, Item<T>[]>();
  let sum = 0;
  for (const item of items) {
    sum += item.cost;
    const list = byNamespace.get(item.namespace);
    if (list === undefined) byNamespace.set(item.namespace, [item]);
    else list.push(item);
  }
  const newestFirst = (a: Item<T>, b: Item<T>): number => b.age - a.age;
  for (const list of byNamespace.values()) {
    let used = list.reduce((each, item) => each + item.cost, 0);
    if (used <= perNamespace) continue;
    for (const item of [...list].sort(newestFirst)) {
      if (used <= perNamespace) break;
      out.set(item.value, 'namespace');
      used -= item.cost - item.kept;
      sum -= item.cost - item.kept;
    }
  }
  if (sum <= total) return out;
  for (const item of [...items].sort(newestFirst)) {
    if (sum <= total) break;
    if (out.has(item.value)) continue;
    out.set(item.value, 'total');
    sum -= item.cost - item.kept;
  }
  return out;
}

/** Ages of the Ingresses: their place in `served`, which is oldest first. */
function agesOf(served: readonly ValidIngress[]): Map<string, number> {
  const ages = new Map<string, number>();
  served.forEach((ingress, at) => ages.set(objectKey(ingress.namespace, ingress.name), at));
  return ages;
}

export interface BudgetInput {
  readonly backends: readonly ModelBackend[];
  readonly routes: readonly ModelRoute[];
  readonly certificates: readonly ModelCertificate[];
  readonly files: ReadonlyMap<string, string>;
  /** What is served of each valid Ingress, oldest first. */
  readonly served: readonly ValidIngress[];
}

export interface BudgetResult {
  readonly backends: readonly ModelBackend[];
  readonly certificates: readonly ModelCertificate[];
  readonly files: ReadonlyMap<string, string>;
  readonly warnings: readonly ModelWarning[];
}

const slotsOfNone = serverSlots([]);

function limitServers(input: BudgetInput, budgets: ModelBudgets, warnings: ModelWarning[]) {
  let sum = 0;
  const perNamespace = new Map<string, number>();
  for (const backend of input.backends) {
    sum += backend.slots.length;
    perNamespace.set(
      backend.namespace,
      (perNamespace.get(backend.namespace) ?? 0) + backend.slots.length,
    );
  }
  const within = [...perNamespace.values()].every(
    (used) => used <= budgets.serverSlotsPerNamespace,
  );
  if (within && sum <= budgets.serverSlots) return input.backends;

  const ingressAges = agesOf(input.served);
  const users = new Map<string, Set<string>>();
  const ages = new Map<string, number>();
  for (const route of input.routes) {
    const age = ingressAges.get(route.ingress) ?? Number.MAX_SAFE_INTEGER;
    ages.set(route.backend, Math.min(ages.get(route.backend) ?? age, age));
    const list = users.get(route.backend);
    if (list === undefined) users.set(route.backend, new Set([route.ingress]));
    else list.add(route.ingress);
  }
  const out = overBudget(
    input.backends.map((backend) => ({
      value: backend.name,
      namespace: backend.namespace,
      cost: backend.slots.length,
      // Left out, a backend keeps its minimum of spare slots.
      kept: slotsOfNone.length,
      age: ages.get(backend.name) ?? Number.MAX_SAFE_INTEGER,
    })),
    budgets.serverSlotsPerNamespace,
    budgets.serverSlots,
  );
  return input.backends.map((backend) => {
    const which = out.get(backend.name);
    if (which === undefined) return backend;
    const key = which === 'namespace' ? 'serverSlotsPerNamespace' : 'serverSlots';
    const scope = which === 'namespace' ? `namespace ${backend.namespace}` : 'all namespaces';
    for (const ingress of [...(users.get(backend.name) ?? [])].sort()) {
      warnings.push({
        ingress,
        reason: ingressEventReasons.BudgetExceeded,
        message: `Ingress ${ingress} routes to Service ${objectKey(backend.namespace, backend.service)}, whose ${String(backend.slots.length)} server slots would take ${scope} over the budget of ${String(budgets[key])} server slots (${sourceOf(key, budgets)}); its endpoints are left out and HAProxy answers 503 for it, newer objects first. Remove endpoints or Services, or have the operator raise ${budgetValues[key]}.`,
      });
    }
    return { ...backend, servers: [], slots: slotsOfNone };
  });
}

/** Bytes of a file as the agents receive it (UTF-8). */
function bytesOf(content: string): number {
  return Buffer.byteLength(content);
}

function limitCertificates(input: BudgetInput, budgets: ModelBudgets, warnings: ModelWarning[]) {
  const files = new Map<string, { namespace: string; secret: string; content: string }>();
  let upper = 0;
  for (const certificate of input.certificates) {
    if (files.has(certificate.file)) continue;
    const content = input.files.get(certificate.file) ?? '';
    const namespace = certificate.secret.slice(0, certificate.secret.indexOf('/'));
    files.set(certificate.file, { namespace, secret: certificate.secret, content });
    upper += content.length * 3;
  }
  // Cheap first: a UTF-16 unit is at most three UTF-8 bytes, so when three bytes per unit of
  // every file together fit the smaller budget, no file is counted byte by byte.
  const smallest = Math.min(budgets.certificateBytes, budgets.certificateBytesPerNamespace);
  if (upper <= smallest) return { certificates: input.certificates, files: input.files };

  const ingressAges = agesOf(input.served);
  const ages = new Map<string, number>();
  const users = new Map<string, Set<string>>();
  for (const ingress of input.served) {
    const label = objectKey(ingress.namespace, ingress.name);
    const age = ingressAges.get(label) ?? Number.MAX_SAFE_INTEGER;
    for (const entry of ingress.tls) {
      const secret = objectKey(ingress.namespace, entry.secretName);
      if (!ages.has(secret)) ages.set(secret, age);
      const list = users.get(secret);
      if (list === undefined) users.set(secret, new Set([label]));
      else list.add(label);
    }
  }
  const out = overBudget(
    [...files].map(([file, { namespace, secret, content }]) => ({
      value: file,
      namespace,
      cost: bytesOf(content),
      kept: 0,
      age: ages.get(secret) ?? Number.MAX_SAFE_INTEGER,
    })),
    budgets.certificateBytesPerNamespace,
    budgets.certificateBytes,
  );
  if (out.size === 0) return { certificates: input.certificates, files: input.files };
  for (const [file, which] of out) {
    const { namespace, secret, content } = files.get(file) ?? {
      namespace: '',
      secret: '',
      content: '',
    };
    const key = which === 'namespace' ? 'certificateBytesPerNamespace' : 'certificateBytes';
    const scope = which === 'namespace' ? `namespace ${namespace}` : 'all namespaces';
    for (const ingress of [...(users.get(secret) ?? [])].sort()) {
      warnings.push({
        ingress,
        reason: ingressEventReasons.BudgetExceeded,
        message: `Ingress ${ingress} uses the certificate of Secret ${secret}, whose ${String(bytesOf(content))} bytes would take ${scope} over the budget of ${String(budgets[key])} certificate bytes (${sourceOf(key, budgets)}); its hosts get the default certificate, newer Secrets first. Use smaller or fewer certificates, or have the operator raise ${budgetValues[key]}.`,
      });
    }
  }
  return {
    certificates: input.certificates.filter((certificate) => !out.has(certificate.file)),
    files: new Map([...input.files].filter(([path]) => !out.has(path))),
  };
}

/** The model's backends and certificates within `budgets`, and what was left out. */
export function applyBudgets(input: BudgetInput, budgets: ModelBudgets): BudgetResult {
  const warnings: ModelWarning[] = [];
  const backends = limitServers(input, budgets, warnings);
  const { certificates, files } = limitCertificates(input, budgets, warnings);
  return { backends, certificates, files, warnings };
}
