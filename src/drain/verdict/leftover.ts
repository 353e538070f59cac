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
  /** The branch's tip is already contained in auto/work. */
  readonly landed: boolean;
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
  /** Unfinished: dropped; the task is still To Do on auto/work and runs again. */
  | { readonly kind: 'drop'; readonly note: string };

export function judgeLeftover(facts: LeftoverFacts): LeftoverVerdict {
  const { branch, task } = facts;
  if (task && isParked(task)) return { kind: 'keep-parked' };
  if (facts.landed) return { kind: 'tidy-landed', note: `${branch}: already landed; removed the branch` };
  if (task && facts.statusOnBranch === DONE_STATUS) return { kind: 'integrate', task, note: `${branch}: finished by an interrupted drain; integrating it now` };
  return { kind: 'drop', note: `${branch}: unfinished work of an interrupted drain removed; ${task ? `${task.id} runs again` : `no such task on ${STAGING_BRANCH}`}` };
}

/** Pure: folders under the worktrees dir no worktree we keep claims (a crash between mkdir and worktree add). */
export function strayWorktreeFolders(names: readonly string[], keep: ReadonlySet<string>): string[] {
  return names.filter((name) => !keep.has(name) && !name.startsWith('.'));
}
