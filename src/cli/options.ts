// Parsing of option values shared by commands; errors are usage errors.
import { UsageError } from '../errors.js';

export function parsePositiveInt(flag: string, value: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, not "${value}"`);
  }
  return Number(value);
}
