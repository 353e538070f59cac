// Failed attempts per task, kept across drains so a task that keeps failing
// is parked with its reason instead of being retried forever.
import type { FsPort } from '../ports.js';
import type { TaskId } from '../types.js';
import type { Attempts } from './types.js';
import { attemptsFile } from '../paths.js';

export async function readAttempts(fs: FsPort, workspaceState: string): Promise<Attempts> {
  const text = await fs.readTextIfExists(attemptsFile(workspaceState));
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Attempts) : {};
  } catch {
    // A torn file cannot happen (atomic writes); a hand-edited broken one resets the counts.
    return {};
  }
}

export async function writeAttempts(fs: FsPort, workspaceState: string, attempts: Attempts): Promise<void> {
  await fs.writeAtomic(attemptsFile(workspaceState), `${JSON.stringify(attempts, null, 2)}\n`, 0o600);
}

/** Pure: the record after one more failure. */
export function recordFailure(attempts: Attempts, taskId: TaskId, reason: string): Attempts {
  const previous = attempts[taskId];
  return {
    ...attempts,
    [taskId]: {
      failures: (previous?.failures ?? 0) + 1,
      lastReason: reason,
      conflictRetried: previous?.conflictRetried ?? false,
    },
  };
}

export function recordConflictRetry(attempts: Attempts, taskId: TaskId, reason: string): Attempts {
  const previous = attempts[taskId];
  return { ...attempts, [taskId]: { failures: previous?.failures ?? 0, lastReason: reason, conflictRetried: true } };
}

/** Pure: forget a task (it landed, was parked or blocked). */
export function forget(attempts: Attempts, taskId: TaskId): Attempts {
  if (!(taskId in attempts)) return attempts;
  const { [taskId]: _gone, ...rest } = attempts;
  return rest;
}
