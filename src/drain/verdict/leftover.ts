// What a task branch an interrupted drain left behind is, from the board on
// auto/work and the branch itself. Pure.
import type { Task } from '../../types.js';
import { isParked } from '../../board/parking.js';
import { DONE_STATUS } from '../../board/readiness.js';
import { STAGING_BRANCH } from '../../staging/names.js';

export interface LeftoverFacts {
  readonly branch: string;
  /** The branch's task on auto/work, when it is there. */
  readonly task: Task | undefined;
  /** Landed on auto/work, contained in it without commits of its own (empty), or neither. */
  readonly onStaging: 'landed' | 'empty' | 'not-landed';
  /** This drain reset auto/work to the base (workBranchMode reset): the branch grew from work that was discarded. */
  readonly stagingReset: boolean;
  /** The task's status as the branch has it (undefined: no such file or unreadable). */
  readonly statusOnBranch: string | undefined;
}

export type LeftoverVerdict =
  /** Parked: the branch and worktree stay for inspection. */
  | { readonly kind: 'keep-parked' }
  /** Landed already: only tidied. */
  | { readonly kind: 'tidy-landed'; readonly note: string }
  /** Finished (Done on the branch): integrated before anything new starts. */
  | { readonly kind: 'integrate'; readonly task: Task; readonly note: string }
  /** Unfinished, empty, or grown from discarded work: dropped; the task runs again when it is ready on auto/work. */
  | { readonly kind: 'drop'; readonly note: string };

function whatNext(task: Task | undefined): string {
  if (!task) return `no such task on ${STAGING_BRANCH}`;
  return task.status === DONE_STATUS ? `${task.id} is Done on ${STAGING_BRANCH}` : `${task.id} runs again`;
}

export function judgeLeftover(facts: LeftoverFacts): LeftoverVerdict {
  const { branch, task } = facts;
  // Reset discarded what the branch grew from: integrating it would bring that back.
  if (facts.stagingReset)
    return {
      kind: 'drop',
      note: `${branch}: grew from ${STAGING_BRANCH} as it was before this drain reset it to the base; removed the branch; ${whatNext(task)}`,
    };
  if (task && isParked(task)) return { kind: 'keep-parked' };
  if (facts.onStaging === 'landed')
    return { kind: 'tidy-landed', note: `${branch}: already landed; removed the branch` };
  if (facts.onStaging === 'empty')
    return {
      kind: 'drop',
      note: `${branch}: no commits of its own, nothing to land; removed the branch; ${whatNext(task)}`,
    };
  if (task && facts.statusOnBranch === DONE_STATUS)
    return { kind: 'integrate', task, note: `${branch}: finished by an interrupted drain; integrating it now` };
  return { kind: 'drop', note: `${branch}: unfinished work of an interrupted drain removed; ${whatNext(task)}` };
}

/** Pure: folders under the worktrees dir no worktree we keep claims (a crash between mkdir and worktree add). */
export function strayWorktreeFolders(names: readonly string[], keep: ReadonlySet<string>): string[] {
  return names.filter((name) => !keep.has(name) && !name.startsWith('.'));
}
