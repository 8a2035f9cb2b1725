/** commander argument parsers shared by the long-running commands; errors read as fixes. */
import { InvalidArgumentError } from 'commander';
import { type ListenAddress, parseListenAddress } from '../net/listen-address.ts';
import { parseCidr } from '../validation/ip-address.ts';

/** `[host]:port`, for example `:5555` or `127.0.0.2:5555`. */
export function listenAddress(value: string): ListenAddress {
  const parsed = parseListenAddress(value);
  if (typeof parsed === 'string') throw new InvalidArgumentError(parsed);
  return parsed;
}

/** A positive number of seconds, returned in milliseconds. */
export function seconds(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) {
    throw new InvalidArgumentError('must be a positive number of seconds.');
  }
  return Number(value) * 1000;
}

/** A whole number of at least 1. */
export function positiveInteger(value: string): number {
  if (!/^[1-9]\d{0,8}$/.test(value)) {
    throw new InvalidArgumentError(`must be a whole number from 1 to 999999999, not "${value}".`);
  }
  return Number(value);
}

/** `true` or `false`, spelled so (`--flag=false` in a chart's args). */
export function trueOrFalse(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError(`must be true or false, not "${value}".`);
}

/** Comma-separated CIDRs (`10.244.0.0/16,fd00:10:244::/56`); empty: none. */
export function cidrList(value: string): string[] {
  if (value === '') return [];
  return value.split(',').map((text) => {
    const parsed = parseCidr(text);
    if (typeof parsed === 'string') {
      throw new InvalidArgumentError(
        `${parsed}; write IPv4 or IPv6 CIDRs separated by commas, e.g. 10.244.0.0/16,fd00:10:244::/56.`,
      );
    }
    return text;
  });
}

/** At least one CIDR, comma-separated. */
export function nonEmptyCidrList(value: string): string[] {
  const list = cidrList(value);
  if (list.length === 0) throw new InvalidArgumentError('must name at least one CIDR.');
  return list;
}
