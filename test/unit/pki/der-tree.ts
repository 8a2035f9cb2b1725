/**
 * DER as a tree for tests that change certificates field by field: read a certificate into
 * nodes, edit them, encode them again (with the shortest lengths). The signature no longer
 * matches after an edit; decoders read the certificate all the same.
 */

export interface DerNode {
  tag: number;
  /** Constructed values hold children; primitive ones hold contents. */
  children?: DerNode[];
  contents?: Uint8Array;
}

/** The TLVs of `der` between `start` and `end` (well-formed input only: it is made by openssl). */
export function parseDer(der: Uint8Array, start = 0, end = der.length): DerNode[] {
  const nodes: DerNode[] = [];
  for (let offset = start; offset < end;) {
    const tag = der[offset] ?? 0;
    let length = der[offset + 1] ?? 0;
    let at = offset + 2;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      length = 0;
      for (let i = 0; i < bytes; i++) length = length * 256 + (der[at + i] ?? 0);
      at += bytes;
    }
    nodes.push(
      tag & 0x20
        ? { tag, children: parseDer(der, at, at + length) }
        : { tag, contents: der.slice(at, at + length) },
    );
    offset = at + length;
  }
  return nodes;
}

function lengthBytes(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [0x80 | bytes.length, ...bytes];
}

export function encodeDer(node: DerNode): Uint8Array {
  const contents = node.children
    ? Buffer.concat(node.children.map(encodeDer))
    : Buffer.from(node.contents ?? []);
  return Buffer.concat([Buffer.from([node.tag, ...lengthBytes(contents.length)]), contents]);
}

/** A primitive node; text is taken as Latin-1 bytes. */
export function primitive(tag: number, contents: readonly number[] | Uint8Array | string): DerNode {
  return {
    tag,
    contents:
      typeof contents === 'string' ? Buffer.from(contents, 'latin1') : Uint8Array.from(contents),
  };
}

export function constructed(tag: number, children: DerNode[]): DerNode {
  return { tag, children };
}

/** The contents of an OBJECT IDENTIFIER `dotted`. */
export function oidBytes(dotted: string): number[] {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let value = arc; ; value = Math.floor(value / 128)) {
      groups.unshift((value % 128) | (groups.length > 0 ? 0x80 : 0));
      if (value < 128) break;
    }
    bytes.push(...groups);
  }
  return bytes;
}

export function cloneDer(node: DerNode): DerNode {
  return node.children
    ? { tag: node.tag, children: node.children.map(cloneDer) }
    : { tag: node.tag, contents: Uint8Array.from(node.contents ?? []) };
}

/** The node at `path` (child indexes from `root`); throws when there is none. */
export function at(root: DerNode, ...path: number[]): DerNode {
  let node = root;
  for (const index of path) {
    const child = node.children?.[index];
    if (child === undefined) throw new Error(`no DER node at ${path.join('.')}`);
    node = child;
  }
  return node;
}

/** A Name of one attribute per RDN: `[[oid, tag, value], …]`. */
export function nameNode(
  attributes: readonly (readonly [string, number, Uint8Array | string])[],
): DerNode {
  return constructed(
    0x30,
    attributes.map(([oid, tag, value]) =>
      constructed(0x31, [
        constructed(0x30, [primitive(0x06, oidBytes(oid)), primitive(tag, value)]),
      ]),
    ),
  );
}
