// The batched integrator: applies the bisection table (verdict/batch.ts) to
// a batch of finished tasks. The chain of merge commits is built on a
// detached HEAD in the staging worktree, so auto/work itself only ever moves
// (compare-and-swap on its ref) to a chain commit a gate passed on. A kill
// at any point leaves auto/work at its last gated state and the staging
// worktree detached (perhaps mid-merge); the next drain puts it back on
// auto/work (staging/verdict.ts) and integrates the unlanded branches again.
import type { TaskId } from '../../types.js';
import type { Git } from '../../git/git.js';
import { STAGING_BRANCH } from '../../staging/names.js';
import { judgeCandidate } from './protected-paths.js';
import { changedSinceFork, protectedPathsDrift } from './guard.js';
import { abandonMerge, landingMessage, type LandingMeta } from './branch.js';
import { runGate, type GateSpec, type IntegratorDeps } from './gate.js';
import {
  conflictOutcome,
  judgeMergedTree,
  type GateResult,
  type IntegrationOutcome,
  afterCulprit,
  afterGate,
  afterLand,
  afterMerge,
  nextStep,
  startBisection,
  type Bisection,
} from '../verdict/index.js';
import { attachHead, resolveCommit } from '../../git/refs.js';
import { abortMerge, conflictedFiles, mergeNoCommit } from '../../git/merge.js';
import { checkoutDetached, checkoutForce, cleanUntracked, commitIndex, resetAndClean } from '../../git/tree.js';

type Outcomes = Map<TaskId, IntegrationOutcome>;

/** Where the chain stands: auto/work's tip (last landed) and the chain's commits on top of it. */
interface Chain {
  landed: string;
  readonly commits: string[];
  /** The commit checked out in the staging worktree now. */
  at: string;
  /**
   * The commit the tree was last made or seen clean at (the status after a
   * gate, and its cleanup); undefined once a merge has touched it since.
   */
  cleanAt: string | undefined;
}

async function moveTo(git: Git, dir: string, chain: Chain, commit: string): Promise<void> {
  if (chain.at !== commit) await resetAndClean(git, dir, commit);
  chain.at = commit;
}

/**
 * Merges one task onto the chain's tip as its own merge commit; a conflict or a protected-path drift leaves the chain
 * as it was.
 */
async function mergeOnto(
  deps: IntegratorDeps,
  dir: string,
  chain: Chain,
  meta: LandingMeta,
  gate: GateSpec,
  batchSize: number,
): Promise<IntegrationOutcome | undefined> {
  const { git } = deps;
  const tip = chain.commits.at(-1) ?? chain.landed;
  await moveTo(git, dir, chain, tip);
  chain.cleanAt = undefined;
  const merge = await mergeNoCommit(git, dir, meta.branch);
  if (!merge.ok) {
    const files = await conflictedFiles(git, dir);
    await abandonMerge(git, dir, tip);
    return conflictOutcome(files, merge.stderr);
  }
  const drift = await protectedPathsDrift(git, dir, gate.script);
  if (drift.length) {
    await abandonMerge(git, dir, tip);
    return { kind: 'gate-failed', gate: judgeMergedTree(drift).gate };
  }
  await commitIndex(git, dir, landingMessage(meta, { batch: batchSize }));
  chain.at = (await resolveCommit(git, dir, 'HEAD'))!;
  chain.commits.push(chain.at);
  return undefined;
}

/** Gates the chain's commit after `prefix` tasks; a gate that moves HEAD is red. */
async function gateAt(
  deps: IntegratorDeps,
  dir: string,
  chain: Chain,
  prefix: number,
  tasks: readonly TaskId[],
  gate: GateSpec,
): Promise<GateResult> {
  const { git } = deps;
  const target = chain.commits[prefix - 1]!;
  await moveTo(git, dir, chain, target);
  const result = await runGate(deps, dir, gate, tasks, () => Promise.resolve(target));
  const after = await git.treeState(dir);
  const verdict = judgeMergedTree([], { result, headMoved: after.head !== target });
  // Whatever the gate built or changed is not part of the chain.
  if (after.dirty || after.head !== target) await resetAndClean(git, dir, target);
  chain.cleanAt = target;
  return verdict.kind === 'commit' ? verdict.gate : { ...verdict.gate, ok: false };
}

/**
 * Integrates a batch (in the given order) and returns each task's outcome,
 * as integrateBranch would have for it. Runs inside the integrator's mutex.
 */
export async function integrateBatch(
  deps: IntegratorDeps,
  stagingDir: string,
  metas: readonly LandingMeta[],
  gate: GateSpec,
): Promise<Outcomes> {
  const { git } = deps;
  const outcomes: Outcomes = new Map();
  const byId = new Map(metas.map((meta) => [meta.task.id, meta]));
  const before = await deps.tip.verify();
  // A task never judges itself: one that changes the gate or the runner's config is not merged at all.
  const mergeable: TaskId[] = [];
  for (const meta of metas) {
    const candidate = judgeCandidate(await changedSinceFork(git, stagingDir, before, meta.branch), gate.script);
    if (candidate.kind === 'park')
      outcomes.set(meta.task.id, { kind: 'protected-paths', paths: candidate.paths, reason: candidate.reason });
    else mergeable.push(meta.task.id);
  }
  const chain: Chain = { landed: before, commits: [], at: before, cleanAt: undefined };
  let finished = false;
  let lastGreen: GateResult | undefined;
  let state: Bisection<GateResult> = startBisection(mergeable);
  await checkoutDetached(git, stagingDir, before);
  try {
    for (;;) {
      const step = nextStep(state);
      if (step.kind === 'done') break;
      if (step.kind === 'merge') {
        const failed = await mergeOnto(deps, stagingDir, chain, byId.get(step.task)!, gate, mergeable.length);
        if (failed) outcomes.set(step.task, failed);
        state = afterMerge(state, !failed);
      } else if (step.kind === 'gate') {
        const result = await gateAt(deps, stagingDir, chain, step.prefix, step.tasks, gate);
        if (result.ok) lastGreen = result;
        state = afterGate(state, step.prefix, result);
      } else if (step.kind === 'land') {
        const target = chain.commits[step.tasks.length - 1]!;
        // Compare-and-swap: auto/work moves only from the state this batch started on or last landed.
        await deps.tip.moveTo(target);
        step.tasks.forEach((task, i) =>
          outcomes.set(task, { kind: 'landed', commit: chain.commits[i]!, gate: lastGreen! }),
        );
        chain.commits.splice(0, step.tasks.length);
        chain.landed = target;
        state = afterLand(state, step.tasks.length);
      } else {
        outcomes.set(step.task, { kind: 'gate-failed', gate: step.gate });
        chain.commits.length = 0;
        state = afterCulprit(state);
      }
    }
    finished = true;
  } finally {
    // Back on auto/work, exactly at its (gated) tip, whatever happened above.
    // When the last gate left the tree clean at what has just landed (every
    // batch that ends green), putting HEAD back on the branch is all there
    // is to do; anything else (a red end, an error midway) gets the full reset.
    if (finished && chain.at === chain.landed && chain.cleanAt === chain.landed) {
      await attachHead(git, stagingDir, STAGING_BRANCH);
    } else {
      await abortMerge(git, stagingDir);
      await checkoutForce(git, stagingDir, STAGING_BRANCH);
      await cleanUntracked(git, stagingDir);
    }
  }
  return outcomes;
}
