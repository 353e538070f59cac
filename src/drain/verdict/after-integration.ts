// What the integrator found, and what happens to the task then. Also the
// integrator's own decisions that need no git: a failed merge's outcome and
// whether a merged tree may be committed. Pure.
import type { TaskId } from '../../types.js';
import type { TaskVerdict } from './task.js';
import { STAGING_BRANCH } from '../../staging/names.js';

export interface GateResult {
  readonly ok: boolean;
  readonly detail: string;
  /** The last lines of the gate's output, for park notes. */
  readonly tail: string;
  readonly durationMs: number;
}

export type IntegrationOutcome =
  | { readonly kind: 'landed'; readonly commit: string; readonly gate: GateResult }
  | { readonly kind: 'already-landed'; readonly commit: string }
  | { readonly kind: 'conflict'; readonly files: readonly string[] }
  /** The branch changes .agent/ or the gates script: parked for a human, never merged. */
  | { readonly kind: 'protected-paths'; readonly paths: readonly string[]; readonly reason: string }
  | { readonly kind: 'gate-failed'; readonly gate: GateResult };

/** Pure: a failed merge, naming its conflicted files, or git's last words when there are none. */
export function conflictOutcome(
  files: readonly string[],
  stderr: string,
): Extract<IntegrationOutcome, { kind: 'conflict' }> {
  return {
    kind: 'conflict',
    files: files.length ? files : [`(merge failed: ${stderr.trim().split('\n').at(-1) ?? 'unknown'})`],
  };
}

export type MergedTreeVerdict =
  { readonly kind: 'commit'; readonly gate: GateResult } | { readonly kind: 'reject'; readonly gate: GateResult };

/**
 * Pure: whether a merged (uncommitted) tree may be committed. `drift` is the
 * protected paths that differ from auto/work before the merge (then the gate
 * did not run); otherwise `gate` is its result and whether it moved HEAD.
 */
export function judgeMergedTree(
  drift: readonly string[],
  gate?: { readonly result: GateResult; readonly headMoved: boolean },
): MergedTreeVerdict {
  if (drift.length || !gate) {
    const detail = `after the merge, ${drift.slice(0, 5).join(', ')} differ from ${STAGING_BRANCH} before it; the gate was not run`;
    return { kind: 'reject', gate: { ok: false, detail, tail: '', durationMs: 0 } };
  }
  if (gate.headMoved)
    return {
      kind: 'reject',
      gate: { ...gate.result, ok: false, detail: 'the gates script moved HEAD (gates must not commit)' },
    };
  return gate.result.ok ? { kind: 'commit', gate: gate.result } : { kind: 'reject', gate: gate.result };
}

/** Pure: a red gate's park reason, with the last three lines it printed. */
export function gateFailureReason(gate: GateResult): string {
  const tail = gate.tail.split('\n').filter(Boolean).slice(-3).join(' | ');
  return `gate failed: ${gate.detail}${tail ? `: ${tail}` : ''}`;
}

export type IntegrationVerdict = Extract<TaskVerdict, { kind: 'land' | 'retry' | 'park' }>;

/**
 * Pure: after a Done task's integration. A first conflict runs the task again
 * (another task changed the same lines and landed first); a second parks it.
 */
export function afterIntegration(integration: IntegrationOutcome, conflictRetried: boolean): IntegrationVerdict {
  switch (integration.kind) {
    case 'landed':
    case 'already-landed':
      return { kind: 'land', commit: integration.commit };
    case 'protected-paths':
      return { kind: 'park', reason: integration.reason };
    case 'conflict': {
      const reason = `merge conflict in ${integration.files.join(', ')}`;
      if (conflictRetried) return { kind: 'park', reason };
      return { kind: 'retry', reason, tellAgent: `${reason}; another task changed the same lines and landed first` };
    }
    case 'gate-failed':
      return { kind: 'park', reason: gateFailureReason(integration.gate) };
  }
}

export type RecoveredVerdict = Extract<TaskVerdict, { kind: 'land' | 'park' | 'run-again' }>;

/** Pure: after integrating finished work an interrupted drain left on its branch. */
export function afterRecoveredIntegration(taskId: TaskId, integration: IntegrationOutcome): RecoveredVerdict {
  switch (integration.kind) {
    case 'landed':
    case 'already-landed':
      return {
        kind: 'land',
        commit: integration.commit,
        reason: 'recovered: integrated the finished work of an interrupted drain',
      };
    case 'protected-paths':
      // Running it again would only produce the same change: a human decides.
      return { kind: 'park', reason: integration.reason, recovered: true };
    default:
      // No longer clean: the task is still To Do on auto/work and simply runs again.
      return {
        kind: 'run-again',
        detail: `${taskId}: finished work from an interrupted drain no longer integrates (${integration.kind}); it will run again`,
      };
  }
}
