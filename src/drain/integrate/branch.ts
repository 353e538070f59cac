// The integrator: one merge at a time into auto/work, gated. The merge is
// made with --no-commit and committed only after the gates pass on the merged
// tree, so auto/work only ever moves to gated states: a kill between merge
// and gate leaves a half-done merge in the staging worktree, which the next
// drain aborts (staging/branch.ts), and nothing has landed.
import type { Task } from '../../types.js';
import { runGate, type GateSpec, type IntegratorDeps } from './gate.js';
import { judgeCandidate } from './protected-paths.js';
import { changedSinceFork, protectedPathsDrift } from './guard.js';
import { conflictOutcome, judgeMergedTree, type GateResult, type IntegrationOutcome } from '../verdict/index.js';
import { isAncestor, resolveCommit } from '../../git/refs.js';
import { abortMerge, conflictedFiles, mergeNoCommit } from '../../git/merge.js';
import type { Git } from '../../git/git.js';
import { commitIndexLoose, resetAndClean } from '../../git/tree.js';

export interface LandingMeta {
  readonly task: Pick<Task, 'id' | 'title'>;
  /** Only a branch recovered from an interrupted drain can already be on auto/work. */
  readonly mayBeLanded?: boolean;
  readonly branch: string;
  readonly runId: string;
  readonly gatesScript: string | undefined;
  /** How review approved the candidate (drain/review/trailer.ts), when a review ran. */
  readonly review?: string;
}

/**
 * The merge commit message; its trailers are how `status` finds landings. A
 * batch's merge is committed before its gate runs (it lands only once a gate
 * passed on a state holding it), so its gate trailer says how it was gated.
 */
export function landingMessage(meta: LandingMeta, gate: GateResult | { readonly batch: number }): string {
  const how = 'batch' in gate ? `in a batch of ${gate.batch}` : `${(gate.durationMs / 1000).toFixed(1)}s`;
  return [
    `Land ${meta.task.id}: ${meta.task.title}`,
    '',
    `Agent-Runner-Task: ${meta.task.id}`,
    `Agent-Runner-Branch: ${meta.branch}`,
    `Agent-Runner-Run: ${meta.runId}`,
    `Agent-Runner-Gate: passed (${meta.gatesScript ?? 'none'}, ${how})`,
    ...(meta.review ? [`Agent-Runner-Review: ${meta.review}`] : []),
    '',
  ].join('\n');
}

/** Back to auto/work as it was: the merge abandoned, the tree exactly at `to`. */
export async function abandonMerge(git: Git, dir: string, to: string): Promise<void> {
  await abortMerge(git, dir);
  await resetAndClean(git, dir, to);
}

/** Merges a task branch into auto/work (checked out in stagingDir) and gates it. */
export async function integrateBranch(
  deps: IntegratorDeps,
  stagingDir: string,
  meta: LandingMeta,
  gate: GateSpec,
): Promise<IntegrationOutcome> {
  const { git } = deps;
  const before = await deps.tip.verify();
  if (meta.mayBeLanded && (await isAncestor(git, stagingDir, meta.branch, 'HEAD'))) {
    return { kind: 'already-landed', commit: before };
  }
  // A task never judges itself: one that changes the gate or the runner's
  // config is not merged at all.
  const candidate = judgeCandidate(await changedSinceFork(git, stagingDir, before, meta.branch), gate.script);
  if (candidate.kind === 'park') return { kind: 'protected-paths', paths: candidate.paths, reason: candidate.reason };
  const merge = await mergeNoCommit(git, stagingDir, meta.branch);
  if (!merge.ok) {
    const files = await conflictedFiles(git, stagingDir);
    await abandonMerge(git, stagingDir, before);
    return conflictOutcome(files, merge.stderr);
  }
  // The gate that runs is auto/work's own: after the merge, .agent/ and the
  // gates script must still be exactly what they were (else red, unrun).
  const drift = await protectedPathsDrift(git, stagingDir, gate.script);
  let ran: { result: GateResult; headMoved: boolean } | undefined;
  if (!drift.length) {
    const candidate = () => commitIndexLoose(git, stagingDir, before, `gate candidate: ${meta.task.id}`);
    const result = await runGate(deps, stagingDir, gate, [meta.task.id], candidate);
    ran = { result, headMoved: (await resolveCommit(git, stagingDir, 'HEAD')) !== before };
  }
  const verdict = judgeMergedTree(drift, ran);
  if (verdict.kind === 'reject') {
    await abandonMerge(git, stagingDir, before);
    return { kind: 'gate-failed', gate: verdict.gate };
  }
  const commit = await deps.tip.commit(landingMessage(meta, verdict.gate));
  // Whatever the gates built or changed is not part of the landing.
  if ((await git.treeState(stagingDir)).dirty) await resetAndClean(git, stagingDir, commit);
  return { kind: 'landed', commit, gate: verdict.gate };
}
