// What to do about git lock files and the processes working in the repository, at the start of a drain or a
// lifecycle command (holding the drain lock). Git takes a lock by creating `<file>.lock` (O_EXCL) and renames it into
// place when done; a git killed in between leaves it, and every later git that needs that file fails ("Unable to
// create ... File exists") until someone removes it. Every git the runner starts leads its own session, so a kill of
// the runner's process group (Ctrl-C, a supervisor) leaves its gits running, still holding their locks.
//
// A process is left by a gone run when it is this user's, works in this repository (has one of its lock files open
// or its working directory there), and carries the identity of the agent-runner process that started it
// (STARTED_BY_VARIABLE) while that process no longer runs: pid and start time together, so a recycled pid does not
// count as alive, and an absent or malformed identity never counts as gone. Those are ended. Any other live process
// that holds a lock open, or a git working in the repository (it may hold one closed while its filter or editor
// runs), makes the run busy: it is never ended, it is named. A lock nothing may hold is stale and removed. Pure.

/** A pid with its start time (process-identity.ts, which a verdict does not import: it reads /proc through a port). */
interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: string | undefined;
}

/** A process found in the repository, with what was read about the process that started it. */
export interface RepositoryProcessFacts {
  readonly pid: number;
  readonly name: string;
  readonly startTime: string | undefined;
  readonly uid: number;
  readonly pgid: number;
  /** The lock file it has open, if any. */
  readonly file: string | undefined;
  /** Its working directory is in the checkout, its worktrees or the git dir. */
  readonly inDirs: boolean;
  /** The agent-runner process its environment names as its starter (a valid STARTED_BY value), if any. */
  readonly startedBy: ProcessIdentity | undefined;
  /** Whether that starter still runs (same pid, same start time); false when there is none. */
  readonly starterRunning: boolean;
}

export interface GitLockFacts {
  readonly locks: readonly string[];
  readonly processes: readonly RepositoryProcessFacts[];
  /** This process: never ended, never a holder. */
  readonly self: { readonly pid: number; readonly uid: number };
  /** Processes already ended once (pid:startTime): still there, they are holders that would not end. */
  readonly alreadyEnded: ReadonlySet<string>;
}

/** A process a gone run left, to end: by its group when it leads one (a git the runner started does). */
export interface LeftProcess extends ProcessIdentity {
  readonly name: string;
  readonly pgid: number;
  readonly leadsGroup: boolean;
  /** The gone agent-runner process that started it. */
  readonly starter: number;
  readonly file: string | undefined;
}

export interface GitLockVerdict {
  /** Left by a gone run: end these, then look again. */
  readonly end: readonly LeftProcess[];
  /** Stale: nothing may hold them. */
  readonly remove: readonly string[];
  /** Held, or maybe held, by a live process: the run is busy; each with who holds it and the fix. */
  readonly busy: readonly { readonly file: string; readonly reason: string }[];
}

/** Pure: the key alreadyEnded holds for a process. */
export function endedKey(process: ProcessIdentity): string {
  return `${process.pid}:${process.startTime ?? ''}`;
}

function leftByGoneRun(process: RepositoryProcessFacts, self: GitLockFacts['self']): boolean {
  return (
    process.uid === self.uid &&
    process.startTime !== undefined &&
    process.startedBy !== undefined &&
    !process.starterRunning &&
    (process.file !== undefined || process.inDirs)
  );
}

/** Who a live holder is, in words: what it is, and whether a run of agent-runner's started it. */
function describeHolder(process: RepositoryProcessFacts, ended: boolean): string {
  const who = `${process.name || 'a process'} pid ${process.pid}`;
  if (ended)
    return `${who}, left by agent-runner pid ${process.startedBy?.pid}, which is gone; it did not end on SIGKILL`;
  if (process.startedBy && process.starterRunning)
    return `${who}, started by agent-runner pid ${process.startedBy.pid}, which is running`;
  return `${who}, which no live or gone agent-runner run is known to have started`;
}

export function judgeGitLocks(facts: GitLockFacts): GitLockVerdict {
  const others = facts.processes.filter((process) => process.pid !== facts.self.pid);
  const wouldNotEnd = (process: RepositoryProcessFacts) => facts.alreadyEnded.has(endedKey(process));
  const left = others.filter((process) => leftByGoneRun(process, facts.self) && !wouldNotEnd(process));
  const live = others.filter((process) => !left.includes(process));
  const end = left.map((process) => ({
    pid: process.pid,
    startTime: process.startTime,
    name: process.name,
    pgid: process.pgid,
    leadsGroup: process.pgid === process.pid,
    starter: process.startedBy!.pid,
    file: process.file,
  }));
  // Still working in the repository: a git may hold any lock closed while its filter, hook or editor runs.
  const workingGits = live.filter((process) => process.name === 'git' && process.inDirs && process.file === undefined);
  const remove: string[] = [];
  const busy: { file: string; reason: string }[] = [];
  for (const file of facts.locks) {
    const opener = live.find((process) => process.file === file);
    if (opener) {
      busy.push({
        file,
        reason: `${file} is held by ${describeHolder(opener, wouldNotEnd(opener))}; wait for it to finish, then run again`,
      });
    } else if (workingGits.length) {
      const gits = workingGits.map((process) => describeHolder(process, wouldNotEnd(process))).join('; ');
      busy.push({
        file,
        reason: `${file} may be held by a git working in the repository (${gits}); wait for it to finish, then run again; if no git runs there, remove the file`,
      });
    } else if (!left.some((process) => process.file === file)) remove.push(file);
  }
  return { end, remove, busy };
}
