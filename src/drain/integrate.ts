// The integrator: one merge at a time into auto/work, gated. The merge is
// made with --no-commit and committed only after the gates pass on the merged
// tree, so auto/work only ever moves to gated states: a kill between merge
// and gate leaves a half-done merge in the staging worktree, which the next
// drain aborts (staging.ts), and nothing has landed.
import * as path from 'node:path';
import type { Clock, FsPort, ProcessPort } from '../ports.js';
import type { Git } from '../git/git.js';
import type { Task, TaskId } from '../types.js';
import { superviseAgent } from '../agent/supervise.js';
import { readBoard, findTask, CONFIG_FILE } from '../board/read.js';
import { ensureBlockedStatusFile } from '../board/write.js';
import { addLabel, appendNote, setStatus } from '../board/edit.js';
import { parkNote } from '../board/parking.js';
import { judgeCandidate } from './protected-paths.js';
import { changedSinceFork, protectedPathsDrift } from './integrate-guard.js';

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

export interface IntegratorDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly git: Git;
}

export interface GateSpec {
  /**
   * Repo-relative path of the gates script; undefined means no gates (every
   * merge is green). Taken from auto/work's committed config before any
   * merge (trusted-config.ts), never from a task's tree.
   */
  readonly script: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

const TAIL_LINES = 15;

/** Runs the gates script in dir. A missing or non-executable script is red, never green. */
export async function runGate(deps: IntegratorDeps, dir: string, gate: GateSpec): Promise<GateResult> {
  if (gate.script === undefined) return { ok: true, detail: 'no gates configured', tail: '', durationMs: 0 };
  const script = path.join(dir, gate.script);
  const stat = await deps.fs.stat(script);
  if (!stat) return { ok: false, detail: `gates script ${gate.script} does not exist`, tail: `gates script ${gate.script} does not exist; add it or set "gates" in .agent/config.json`, durationMs: 0 };
  if ((stat.mode & 0o111) === 0) return { ok: false, detail: `gates script ${gate.script} is not executable`, tail: `gates script ${gate.script} is not executable; chmod +x it and commit`, durationMs: 0 };
  const lines: string[] = [];
  const started = deps.clock.now();
  const run = await superviseAgent(
    { process: deps.process, clock: deps.clock },
    { program: script, args: [], env: { ...gate.env, AGENT_RUNNER_GATE: '1' }, cwd: dir },
    { idleTimeoutMs: gate.timeoutMs, wallClockMs: gate.timeoutMs, killGraceMs: 5000 },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 200) lines.shift();
    },
  );
  const durationMs = deps.clock.now() - started;
  const tail = lines.slice(-TAIL_LINES).join('\n');
  if (run.endedBy !== 'exit') return { ok: false, detail: `gates timed out (${run.endedBy})`, tail, durationMs };
  if (run.exitCode !== 0) return { ok: false, detail: `gates exited ${run.exitCode ?? run.signal}`, tail, durationMs };
  return { ok: true, detail: 'gates passed', tail, durationMs };
}

export interface LandingMeta {
  readonly task: Pick<Task, 'id' | 'title'>;
  /** Only a branch recovered from an interrupted drain can already be on auto/work. */
  readonly mayBeLanded?: boolean;
  readonly branch: string;
  readonly runId: string;
  readonly gatesScript: string | undefined;
}

/** The merge commit message; its trailers are how `status` finds landings. */
export function landingMessage(meta: LandingMeta, gate: GateResult): string {
  return [
    `Land ${meta.task.id}: ${meta.task.title}`,
    '',
    `Agent-Runner-Task: ${meta.task.id}`,
    `Agent-Runner-Branch: ${meta.branch}`,
    `Agent-Runner-Run: ${meta.runId}`,
    `Agent-Runner-Gate: passed (${meta.gatesScript ?? 'none'}, ${(gate.durationMs / 1000).toFixed(1)}s)`,
    '',
  ].join('\n');
}

async function cleanStaging(git: Git, dir: string, to: string): Promise<void> {
  await git.run(dir, ['reset', '--quiet', '--hard', to]);
  await git.run(dir, ['clean', '-fdq']);
}

/** Merges a task branch into auto/work (checked out in stagingDir) and gates it. */
export async function integrateBranch(deps: IntegratorDeps, stagingDir: string, meta: LandingMeta, gate: GateSpec): Promise<IntegrationOutcome> {
  const { git } = deps;
  const before = (await git.resolve(stagingDir, 'HEAD'))!;
  if (meta.mayBeLanded && (await git.isAncestor(stagingDir, meta.branch, 'HEAD'))) {
    return { kind: 'already-landed', commit: before };
  }
  // A task never judges itself: one that changes the gate or the runner's
  // config is not merged at all.
  const verdict = judgeCandidate(await changedSinceFork(git, stagingDir, before, meta.branch), gate.script);
  if (verdict.kind === 'park') return { kind: 'protected-paths', paths: verdict.paths, reason: verdict.reason };
  const merge = await git.try(stagingDir, ['merge', '--no-ff', '--no-commit', meta.branch]);
  if (merge.exitCode !== 0) {
    const files = (await git.try(stagingDir, ['diff', '--name-only', '--diff-filter=U'])).stdout.trim().split('\n').filter(Boolean);
    await git.try(stagingDir, ['merge', '--abort']);
    await cleanStaging(git, stagingDir, before);
    return { kind: 'conflict', files: files.length ? files : [`(merge failed: ${merge.stderr.trim().split('\n').at(-1) ?? 'unknown'})`] };
  }
  // The gate that runs is auto/work's own: after the merge, .agent/ and the
  // gates script must still be exactly what they were (else red, unrun).
  const drift = await protectedPathsDrift(git, stagingDir, before, gate.script);
  if (drift.length) {
    await git.try(stagingDir, ['merge', '--abort']);
    await cleanStaging(git, stagingDir, before);
    const detail = `after the merge, ${drift.slice(0, 5).join(', ')} differ from auto/work before it; the gate was not run`;
    return { kind: 'gate-failed', gate: { ok: false, detail, tail: '', durationMs: 0 } };
  }
  const result = await runGate(deps, stagingDir, gate);
  const headAfterGate = await git.resolve(stagingDir, 'HEAD');
  if (headAfterGate !== before) {
    await git.try(stagingDir, ['merge', '--abort']);
    await cleanStaging(git, stagingDir, before);
    return { kind: 'gate-failed', gate: { ...result, ok: false, detail: 'the gates script moved HEAD (gates must not commit)' } };
  }
  if (!result.ok) {
    await git.try(stagingDir, ['merge', '--abort']);
    await cleanStaging(git, stagingDir, before);
    return { kind: 'gate-failed', gate: result };
  }
  await git.run(stagingDir, ['commit', '--quiet', '--no-verify', '-m', landingMessage(meta, result)]);
  const after = await git.treeState(stagingDir);
  const commit = after.head!;
  // Whatever the gates built or changed is not part of the landing.
  if (after.dirty) await cleanStaging(git, stagingDir, commit);
  return { kind: 'landed', commit, gate: result };
}

/** Edits one task's file on auto/work and commits it (park, block). Returns the commit, or undefined when the task is gone. */
async function commitTaskEdit(
  deps: IntegratorDeps,
  stagingDir: string,
  taskId: TaskId,
  edit: (text: string) => string,
  message: string,
  alsoEnsureBlockedStatus = false,
): Promise<string | undefined> {
  const board = await readBoard(deps.fs, stagingDir);
  const task = findTask(board, taskId);
  if (!task) return undefined;
  const file = path.join(stagingDir, task.file);
  const text = await deps.fs.readText(file);
  const edited = edit(text);
  if (edited === text) return deps.git.resolve(stagingDir, 'HEAD');
  await deps.fs.writeAtomic(file, edited);
  await deps.git.run(stagingDir, ['add', '--', task.file]);
  // The backlog CLI refuses a status its config does not list.
  if (alsoEnsureBlockedStatus && (await ensureBlockedStatusFile(deps.fs, stagingDir))) await deps.git.run(stagingDir, ['add', '--', CONFIG_FILE]);
  await deps.git.run(stagingDir, ['commit', '--quiet', '--no-verify', '-m', message]);
  return deps.git.resolve(stagingDir, 'HEAD');
}

/** Parks a task on auto/work: label `parked` and a note with the reason and the branch. */
export function parkTask(deps: IntegratorDeps, stagingDir: string, taskId: TaskId, reason: string, branch: string): Promise<string | undefined> {
  const oneLine = reason.replace(/\s+/g, ' ').trim();
  return commitTaskEdit(deps, stagingDir, taskId, (text) => appendNote(addLabel(text, 'parked'), parkNote(oneLine, branch)), `Park ${taskId}: ${oneLine.slice(0, 120)}`);
}

/** Commits Blocked and its reason onto auto/work, so the task stops recurring. */
export function blockTask(deps: IntegratorDeps, stagingDir: string, taskId: TaskId, reason: string): Promise<string | undefined> {
  const oneLine = reason.replace(/\s+/g, ' ').trim();
  return commitTaskEdit(
    deps,
    stagingDir,
    taskId,
    (text) => {
      const blocked = setStatus(text, 'Blocked');
      return blocked.includes(oneLine) ? blocked : appendNote(blocked, `Blocked: ${oneLine}`);
    },
    `Block ${taskId}: ${oneLine.slice(0, 120)}`,
    true,
  );
}
