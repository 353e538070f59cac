// A drain's memory of a rate-limit reset, in the repo user's own state
// (rate-limit.json), so the next drain of the repo waits for it too. The
// file is the user's: whatever it says is capped by SessionGuard.carryOver,
// and anything unreadable is no reset.
import type { FsPort } from '../ports.js';
import { rateLimitFile } from '../paths.js';

export interface RememberedReset {
  readonly assistant: string;
  /** ms since the epoch. */
  readonly until: number;
}

export async function readRememberedReset(fs: FsPort, workspaceState: string): Promise<RememberedReset | undefined> {
  try {
    const value = JSON.parse((await fs.readTextIfExists(rateLimitFile(workspaceState))) ?? 'null') as {
      assistant?: unknown;
      until?: unknown;
    } | null;
    const until = typeof value?.until === 'string' ? Date.parse(value.until) : Number.NaN;
    return typeof value?.assistant === 'string' && !Number.isNaN(until)
      ? { assistant: value.assistant, until }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Best effort: a lost write only means the next drain asks the CLI again. */
export function rememberReset(fs: FsPort, workspaceState: string, reset: RememberedReset): void {
  void fs
    .writeAtomic(
      rateLimitFile(workspaceState),
      `${JSON.stringify({ assistant: reset.assistant, until: new Date(reset.until).toISOString() })}\n`,
      0o600,
    )
    .catch(() => undefined);
}
