// Parsing of option values shared by commands; errors are usage errors.
import { UsageError } from '../errors.js';

export function parsePositiveInt(flag: string, value: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, not "${value}"`);
  }
  return Number(value);
}

/**
 * --broker-url: the run's provider broker, http://127.0.0.1:PORT and nothing else (no host name, no path): the
 * agents' egress reaches the broker only there, and a URL elsewhere would send their requests, with the capability,
 * to whoever listens at it.
 */
export function parseBrokerUrl(flag: string, value: string): string {
  const match = /^http:\/\/127\.0\.0\.1:([1-9][0-9]{0,4})$/.exec(value);
  if (!match || Number(match[1]) > 65535)
    throw new UsageError(
      `${flag} must be http://127.0.0.1:PORT (the run's broker on loopback, port 1 to 65535, no path), not "${value}"; dispatch passes the repo's broker_port`,
    );
  return value;
}
