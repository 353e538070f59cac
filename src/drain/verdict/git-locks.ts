// Which git lock files a killed git left behind. Git takes a lock by
// creating `<file>.lock` (O_EXCL) and renames it into place when done; a git
// killed in between leaves it, and every later git that needs that file
// fails ("Unable to create ... File exists") until someone removes it. A
// lock is stale when no process has it open and no git process is working
// in the repository (git can hold a lock closed while a hook or editor
// runs). Pure.

export interface LockHolderProcess {
  readonly pid: number;
  readonly name: string;
  /** The lock file it has open, or undefined for a git working in the repository. */
  readonly file: string | undefined;
}

export interface GitLockVerdict {
  readonly remove: readonly string[];
  /** Kept, each with who may hold it: the operator is told, never guessed for. */
  readonly keep: readonly { readonly file: string; readonly reason: string }[];
}

export function judgeGitLocks(locks: readonly string[], holders: readonly LockHolderProcess[]): GitLockVerdict {
  const working = holders.filter((holder) => holder.file === undefined);
  const remove: string[] = [];
  const keep: { file: string; reason: string }[] = [];
  for (const file of locks) {
    const opener = holders.find((holder) => holder.file === file);
    if (opener) keep.push({ file, reason: `open in pid ${opener.pid} (${opener.name})` });
    else if (working.length)
      keep.push({
        file,
        reason: `git is running in the repository (pid ${working.map((holder) => holder.pid).join(', ')}) and may hold it`,
      });
    else remove.push(file);
  }
  return { remove, keep };
}

/** Pure: the note a kept lock gets, with the fix. */
export function keptLockNote(kept: GitLockVerdict['keep'][number]): string {
  return `kept git lock ${kept.file}: ${kept.reason}; if no git is running there, remove the file`;
}
