/** commander argument parsers shared by the long-running commands; errors read as fixes. */
import { InvalidArgumentError } from 'commander';
import { type ListenAddress, parseListenAddress } from '../net/listen-address.ts';

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

/** `true` or `false`, spelled so (`--flag=false` in a chart's args). */
export function trueOrFalse(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError(`must be true or false, not "${value}".`);
}
