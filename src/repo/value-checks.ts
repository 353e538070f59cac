// The checks a value of .agent/config.json passes, shared by the top-level
// keys (config.ts) and the review block (review-config.ts). Each returns
// what is wrong, or undefined. Pure.
import * as path from 'node:path';

export const isString = (value: unknown): value is string => typeof value === 'string';

export const intIn = (min: number, max: number) => (value: unknown) =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max
    ? undefined
    : `must be a whole number from ${min} to ${max}`;

export const oneOf = (choices: readonly string[]) => (value: unknown) =>
  isString(value) && choices.includes(value) ? undefined : `must be one of ${choices.join(', ')}`;

export const trueOrFalse = (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be true or false');

/** Paths inside the repo only: no absolute paths, no climbing out. */
export const repoPath = (value: unknown) => {
  if (!isString(value) || value.trim() === '') return 'must be a path inside the repo';
  if (path.isAbsolute(value) || path.normalize(value).split(path.sep).includes('..'))
    return 'must be a relative path inside the repo';
  return undefined;
};
