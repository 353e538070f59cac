// The push tokens of task attempts: each one fresh and random, good for one
// (task, attempt), and recorded only as its SHA-256 in a file of the
// runner's own (pushTokensDir/TASK.ATTEMPT, 0600), so neither the runner's
// disk nor a backup holds a usable token. A token names its attempt in clear
// (ar1.TASK.ATTEMPT.SECRET), so the endpoint reads one file to check it.
import * as path from 'node:path';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FsPort } from '../../../src/ports.js';
import { FailedError } from '../../../src/errors.js';

/** An attempt as the endpoint and the tokens name it. */
export interface ResultAttempt {
  readonly task: string;
  readonly attempt: number;
}

const TASK = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const TOKEN = /^ar1\.([A-Za-z][A-Za-z0-9_-]{0,63})\.([1-9][0-9]{0,5})\.([A-Za-z0-9_-]{43})$/;

function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function tokenFile(dir: string, of: ResultAttempt): string {
  if (!TASK.test(of.task) || !Number.isInteger(of.attempt) || of.attempt < 1 || of.attempt > 999_999)
    throw new FailedError(
      `push token for task ${JSON.stringify(of.task)} attempt ${of.attempt}: not a task id and attempt a token can name; pass the board's task id and an attempt from 1`,
    );
  return path.join(dir, `${of.task}.${of.attempt}`);
}

/** A fresh token for one attempt; only its hash is written (replacing an earlier token of the same attempt). */
export async function issuePushToken(
  fs: Pick<FsPort, 'writeAtomic' | 'mkdirp'>,
  dir: string,
  of: ResultAttempt,
  random: (bytes: number) => Buffer = randomBytes,
): Promise<string> {
  const file = tokenFile(dir, of);
  const token = `ar1.${of.task}.${of.attempt}.${random(32).toString('base64url')}`;
  await fs.mkdirp(dir, 0o700);
  await fs.writeAtomic(file, `${hashOf(token)}\n`, 0o600);
  return token;
}

/** The attempt's token no longer pushes anything (an attempt that ended, or whose result was taken). */
export async function revokePushToken(fs: Pick<FsPort, 'remove'>, dir: string, of: ResultAttempt): Promise<void> {
  await fs.remove(tokenFile(dir, of));
}

/** The attempt a presented token is good for, or undefined: malformed, never issued, revoked or not its hash. */
export async function attemptOfToken(
  fs: Pick<FsPort, 'readTextIfExists'>,
  dir: string,
  token: string,
): Promise<ResultAttempt | undefined> {
  const match = TOKEN.exec(token);
  if (!match) return undefined;
  const of = { task: match[1]!, attempt: Number(match[2]) };
  const recorded = (await fs.readTextIfExists(tokenFile(dir, of)))?.trim();
  if (recorded === undefined || !/^[0-9a-f]{64}$/.test(recorded)) return undefined;
  const given = Buffer.from(hashOf(token), 'hex');
  return timingSafeEqual(given, Buffer.from(recorded, 'hex')) ? of : undefined;
}
