/**
 * IP addresses and CIDRs as bytes: parsed once, compared by prefix, printed in canonical form.
 * Node's BlockList was not enough for endpoint rules: it matches an IPv6 range such as `::/0`
 * against every IPv4 address too (through the IPv4-mapped form), and it cannot say which IPv4
 * address an IPv6 address carries. Pure.
 */
import { isIP } from 'node:net';

/** 4 bytes (IPv4) or 16 (IPv6). */
export type IpBytes = Uint8Array;

export interface Cidr {
  readonly bytes: IpBytes;
  readonly prefix: number;
  /** As given, for messages. */
  readonly text: string;
}

function ipv4Bytes(text: string): IpBytes {
  return Uint8Array.from(text.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address `isIP` accepts (no zone index). */
function ipv6Bytes(text: string): IpBytes {
  const bytes = new Uint8Array(16);
  let tail = text;
  let v4: IpBytes | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    v4 = ipv4Bytes(text.slice(lastColon + 1));
    // The dotted quad stands for the last two groups.
    tail = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const groups = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const halves = tail.split('::');
  const head = groups(halves[0] ?? '');
  const rest = halves.length > 1 ? groups(halves[1] ?? '') : [];
  const words = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  for (const [i, word] of words.entries()) {
    bytes[i * 2] = word >> 8;
    bytes[i * 2 + 1] = word & 0xff;
  }
  if (v4 !== undefined) bytes.set(v4, 12);
  return bytes;
}

/** The bytes of an IPv4 or IPv6 address, or undefined for anything else (zone indexes too). */
export function parseIp(text: string): IpBytes | undefined {
  const family = isIP(text);
  if (family === 4) return ipv4Bytes(text);
  if (family === 6 && !text.includes('%')) return ipv6Bytes(text);
  return undefined;
}

/** Canonical text: dotted IPv4, RFC 5952 IPv6 (lower case, longest zero run as `::`). */
export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j += 1;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]): string => list.map((word) => word.toString(16)).join(':');
  if (bestStart < 0) return hex(words);
  return `${hex(words.slice(0, bestStart))}::${hex(words.slice(bestStart + bestLength))}`;
}

/** A CIDR (`10.244.0.0/16`, `fd00::/8`), or why it is not one. */
export function parseCidr(text: string): Cidr | string {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const bytes = parseIp(address);
  if (bytes === undefined) return `${text} is not a CIDR: ${address} is not an IP address`;
  const bits = bytes.length * 8;
  const prefixText = slash < 0 ? '' : text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
    return `${text} is not a CIDR: it needs a prefix length from 0 to ${String(bits)} after a /`;
  }
  return { bytes, prefix: Number(prefixText), text };
}

/** Whether `bytes` lies in `cidr` (of the same family: an IPv6 range never holds IPv4). */
export function inCidr(bytes: IpBytes, cidr: Cidr): boolean {
  if (bytes.length !== cidr.bytes.length) return false;
  const whole = Math.floor(cidr.prefix / 8);
  for (let i = 0; i < whole; i += 1) if (bytes[i] !== cidr.bytes[i]) return false;
  const rest = cidr.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] ?? 0) & mask) === ((cidr.bytes[whole] ?? 0) & mask);
}

/** Whether two addresses are the same (same family, same bytes). */
export function sameIp(a: IpBytes, b: IpBytes): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
