/**
 * Test material for the validator's tests: real CAs and leaves from src/pki, encoded as Secret
 * data the way the API server carries it (base64), and the chart's own defaults and schema.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  type CryptoKeyPair,
  type LeafRole,
  type Certificate,
  encodeCertificateChain,
  encodePrivateKey,
  issueCa,
  issueLeaf,
} from '../../../src/pki/index.ts';
import type { SecretObject } from '../../../src/validation/secret-data.ts';
import { isRecord } from '../../../src/is-record.ts';

export const now = new Date('2030-03-01T12:00:00Z');
export const hourMs = 3_600_000;

export interface TestCa {
  readonly certificate: Certificate;
  readonly keys: CryptoKeyPair;
}

export async function makeCa(
  commonName = 'haptic-agent-ca',
  options: { at?: Date; days?: number; keys?: CryptoKeyPair } = {},
): Promise<TestCa> {
  const issued = await issueCa({
    commonName,
    validityDays: options.days ?? 365,
    now: options.at ?? now,
    ...(options.keys === undefined ? {} : { keys: options.keys }),
  });
  return { certificate: issued.certificate, keys: issued.keys };
}

export interface TestLeaf {
  readonly certificate: Certificate;
  readonly keys: CryptoKeyPair;
}

export async function makeLeaf(
  role: LeafRole,
  dnsName: string,
  ca: TestCa,
  options: { at?: Date; days?: number } = {},
): Promise<TestLeaf> {
  const issued = await issueLeaf({
    role,
    dnsName,
    issuer: { certificate: ca.certificate, privateKey: ca.keys.privateKey },
    validityDays: options.days ?? 30,
    now: options.at ?? now,
  });
  return { certificate: issued.certificate, keys: issued.keys };
}

export function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export function pem(...certificates: Certificate[]): string {
  return encodeCertificateChain(certificates);
}

export interface IdentityParts {
  readonly leaf: TestLeaf;
  /** Key to store instead of the leaf's own. */
  readonly key?: CryptoKeyPair;
  readonly trust: readonly Certificate[];
  readonly previous?: readonly Certificate[];
  readonly until?: string;
}

/** Identity Secret data (base64 values). */
export function identityData(parts: IdentityParts): Record<string, string> {
  const data: Record<string, string> = {
    'tls.crt': b64(pem(parts.leaf.certificate)),
    'tls.key': b64(encodePrivateKey((parts.key ?? parts.leaf.keys).privateKey)),
    'ca.crt': b64(pem(...parts.trust)),
  };
  if (parts.previous !== undefined) data['previous-ca.crt'] = b64(pem(...parts.previous));
  if (parts.until !== undefined) data['previous-ca-until'] = b64(parts.until);
  return data;
}

/** Key-pair data (tls.crt + tls.key). */
export function keyPairData(certificate: Certificate, keys: CryptoKeyPair): Record<string, string> {
  return {
    'tls.crt': b64(pem(certificate)),
    'tls.key': b64(encodePrivateKey(keys.privateKey)),
  };
}

export function secret(
  name: string,
  data: Record<string, string>,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  namespace = 'haptic',
): SecretObject {
  return {
    name,
    namespace,
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
    data,
  };
}

export const defaultMarker = { 'haptic.haproxy.org/certificate-provider': 'default' };
export const certManagerMarker = {
  'cert-manager.io/certificate-name': 'haptic-agent-server',
  'cert-manager.io/issuer-name': 'haptic-agent-ca',
};

const chartDir = new URL('../../../chart/', import.meta.url);

/** The chart's values.yaml. */
export function chartDefaults(): Record<string, unknown> {
  const parsed: unknown = parse(readFileSync(new URL('values.yaml', chartDir), 'utf8'), {
    version: '1.1',
  });
  if (!isRecord(parsed)) throw new Error('chart/values.yaml is not a map');
  return parsed;
}

/** The chart's values.schema.json. */
export function chartSchema(): object {
  const parsed: unknown = JSON.parse(readFileSync(new URL('values.schema.json', chartDir), 'utf8'));
  if (!isRecord(parsed)) throw new Error('chart/values.schema.json is not an object');
  return parsed;
}

/** Nested values from dotted keys: `{ 'haproxy.agent.tls.managed': false }`. */
export function valuesOf(flat: Record<string, unknown>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(flat)) {
    const keys = path.split('.');
    const last = keys.pop() ?? '';
    let node = root;
    for (const key of keys) {
      const next = node[key];
      if (isRecord(next)) node = next;
      else {
        const created: Record<string, unknown> = {};
        node[key] = created;
        node = created;
      }
    }
    node[last] = value;
  }
  return root;
}
