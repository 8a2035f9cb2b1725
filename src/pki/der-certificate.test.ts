/**
 * The DER reader against Node's X509Certificate (OpenSSL) on certificates made by the real
 * openssl: names and dates read equal, and over thousands of changed certificates, every
 * certificate the reader accepts is one OpenSSL accepts and reads the same (it may refuse
 * more, never less); a refusal is always a MalformedDer.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type DerNode,
  at,
  cloneDer,
  constructed,
  encodeDer,
  parseDer,
  primitive,
} from '../../test/unit/pki/der-tree.ts';
import { readDerCertificate } from './der-certificate.ts';
import { MalformedDer, tags } from './der-reader.ts';
import { peculiarX509 } from './peculiar-loader.ts';

const dir = mkdtempSync(join(tmpdir(), 'haptic-der-certificate-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function openssl(args: readonly string[]): void {
  const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${result.stderr}`);
}

/** A self-signed DER certificate by openssl req with these options. */
function made(name: string, subject: string, options: readonly string[] = []): Uint8Array {
  const config = join(dir, `${name}.cnf`);
  writeFileSync(config, '[req]\ndistinguished_name=dn\nx509_extensions=ext\n[dn]\n[ext]\n');
  openssl([
    ...['req', '-x509', '-config', config, '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
    ...['-nodes', '-keyout', `${name}.key`, '-subj', subject, '-outform', 'DER'],
    ...['-out', `${name}.der`, ...options],
  ]);
  return new Uint8Array(readFileSync(join(dir, `${name}.der`)));
}

const certificates: readonly (readonly [string, Uint8Array])[] = [
  [
    'a CA with extensions',
    made('ca', '/O=Example, Inc./CN=ca', [
      '-days',
      '3',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=keyCertSign',
      '-addext',
      'subjectAltName=DNS:a.example',
    ]),
  ],
  ['a version 1 certificate', made('v1', '/CN=v1', ['-days', '3'])],
  ['dates past 2049 (GeneralizedTime)', made('far', '/CN=far', ['-days', '15000'])],
  [
    'escapes and UTF-8 in names',
    made('escapes', '/CN=#a, b+c;d<e>"f\\\\g /O= lead and trail /OU=Grüße ☺ 😀/L=x=y', [
      '-utf8',
      '-days',
      '3',
    ]),
  ],
  [
    'a multi-valued RDN',
    made('multi', '/DC=org/DC=example/CN=a+UID=b/emailAddress=a@example.org', [
      '-multivalue-rdn',
      '-days',
      '3',
    ]),
  ],
  ['a leading # alone and a trailing space', made('hash', '/CN=#/O=a /OU= ', ['-days', '3'])],
];

/** What Node reads of `der`, or undefined when OpenSSL refuses it. */
function nativeView(der: Uint8Array) {
  try {
    const native = new X509Certificate(der);
    return {
      subject: native.subject.replace(/\n/g, ', '),
      issuer: native.issuer.replace(/\n/g, ', '),
      notBefore: native.validFromDate.getTime(),
      notAfter: native.validToDate.getTime(),
    };
  } catch {
    return undefined;
  }
}

function ourView(der: Uint8Array) {
  try {
    const { subject, issuer, notBefore, notAfter } = readDerCertificate(der);
    return { subject, issuer, notBefore, notAfter };
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedDer);
    return undefined;
  }
}

describe('readDerCertificate on openssl certificates', () => {
  it.each(certificates)('reads names and dates of %s as Node and @peculiar/x509 do', (_, der) => {
    const ours = ourView(der);
    expect(ours).toBeDefined();
    expect(ours).toEqual(nativeView(der));
    const peculiar = new (peculiarX509().X509Certificate)(der);
    expect(ours?.notBefore).toBe(peculiar.notBefore.getTime());
    expect(ours?.notAfter).toBe(peculiar.notAfter.getTime());
  });
});

/** The attributes of a printed name, split at unescaped `, ` and ` + `, each `[type, value]`. */
function attributesOf(name: string): (readonly [string, string])[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '\\') {
      current += name.slice(i, i + 2);
      i++;
    } else if (name.startsWith(', ', i) || name.startsWith(' + ', i)) {
      parts.push(current);
      current = '';
      i += name[i] === ',' ? 1 : 2;
    } else current += name[i] ?? '';
  }
  if (name !== '') parts.push(current);
  return parts.map((part) => [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]);
}

/**
 * True when OpenSSL's view equals ours, but for the names of attribute types the reader's
 * table does not list (it prints their OIDs; OpenSSL knows a thousand more).
 */
function sameAsOurs(
  ours: NonNullable<ReturnType<typeof ourView>>,
  theirs: ReturnType<typeof nativeView>,
): boolean {
  if (theirs === undefined) return false;
  const sameName = (a: string, b: string): boolean => {
    const left = attributesOf(a);
    const right = attributesOf(b);
    return (
      left.length === right.length &&
      left.every(([type, value], i) => {
        const [otherType, otherValue] = right[i] ?? ['', ''];
        return value === otherValue && (type === otherType || /^\d+(\.\d+)+$/.test(type));
      })
    );
  };
  return (
    sameName(ours.subject, theirs.subject) &&
    sameName(ours.issuer, theirs.issuer) &&
    ours.notBefore === theirs.notBefore &&
    ours.notAfter === theirs.notAfter
  );
}

/** Every node of a tree with its path. */
function nodesOf(node: DerNode, path: number[] = []): (readonly [DerNode, number[]])[] {
  return [
    [node, path],
    ...(node.children ?? []).flatMap((child, i) => nodesOf(child, [...path, i])),
  ];
}

type Edit = (root: DerNode, pick: number, bytes: Uint8Array) => void;

const tagPool = [
  0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1c, 0x1e, 0x30,
  0x31, 0x80, 0x81, 0x82, 0xa0, 0xa3,
];

/** Structural edits: each picks a node by `pick` and changes it with `bytes`. */
const edits: readonly Edit[] = [
  (root, pick, bytes) => {
    const primitives = nodesOf(root).filter(([node]) => node.contents !== undefined);
    const [node] = primitives[pick % primitives.length] ?? [];
    if (node) node.contents = bytes;
  },
  (root, pick, bytes) => {
    const all = nodesOf(root);
    const [node] = all[pick % all.length] ?? [];
    if (node) node.tag = tagPool[(bytes[0] ?? 0) % tagPool.length] ?? 0;
  },
  (root, pick) => {
    const parents = nodesOf(root).filter(([node]) => (node.children?.length ?? 0) > 0);
    const [node] = parents[pick % parents.length] ?? [];
    node?.children?.splice(pick % node.children.length, 1);
  },
  (root, pick) => {
    const parents = nodesOf(root).filter(([node]) => (node.children?.length ?? 0) > 0);
    const [node] = parents[pick % parents.length] ?? [];
    const child = node?.children?.[pick % node.children.length];
    if (node?.children && child)
      node.children.splice(pick % node.children.length, 0, cloneDer(child));
  },
  (root, pick, bytes) => {
    const parents = nodesOf(root).filter(([node]) => node.children !== undefined);
    const [node] = parents[pick % parents.length] ?? [];
    node?.children?.push(primitive(tagPool[(bytes[0] ?? 0) % tagPool.length] ?? 0, bytes.slice(1)));
  },
  (root, pick, bytes) => {
    const primitives = nodesOf(root).filter(([node]) => node.contents !== undefined);
    const [node, path] = primitives[pick % primitives.length] ?? [];
    if (node === undefined || path === undefined || path.length === 0) return;
    const parent = at(root, ...path.slice(0, -1));
    parent.children?.splice(
      path[path.length - 1] ?? 0,
      1,
      constructed(0x30, [primitive(tags.integer, bytes.slice(0, 1))]),
    );
  },
];

describe('readDerCertificate never accepts what OpenSSL refuses', () => {
  const roots = certificates.map(([, der]) => parseDer(der)[0]);

  it('over structural edits: accepted means accepted by OpenSSL and read the same', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.nat({ max: roots.length - 1 }),
        fc.array(
          fc.tuple(fc.nat({ max: edits.length - 1 }), fc.nat(), fc.uint8Array({ maxLength: 12 })),
          { minLength: 1, maxLength: 3 },
        ),
        (which, steps) => {
          const root = cloneDer(roots[which] ?? { tag: 0 });
          for (const [edit, pick, bytes] of steps) edits[edit]?.(root, pick, bytes);
          const der = encodeDer(root);
          const ours = ourView(der);
          if (ours !== undefined) {
            accepted++;
            expect(sameAsOurs(ours, nativeView(der)), Buffer.from(der).toString('hex')).toBe(true);
          }
        },
      ),
      { numRuns: 4000 },
    );
    // Enough of the edited certificates are still accepted for the property to say something.
    expect(accepted).toBeGreaterThan(100);
  });

  it('over changed bytes and truncations: the same', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: certificates.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 0xff })), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.option(fc.nat()),
        (which, changes, cut) => {
          const original = certificates[which]?.[1] ?? new Uint8Array();
          const der = Uint8Array.from(original);
          for (const [index, value] of changes) der[index % der.length] = value;
          const input = cut === null ? der : der.subarray(0, cut % der.length);
          const ours = ourView(input);
          if (ours !== undefined) {
            expect(sameAsOurs(ours, nativeView(input)), Buffer.from(input).toString('hex')).toBe(
              true,
            );
          }
        },
      ),
      { numRuns: 4000 },
    );
  });
});
