// The integrator: one merge at a time into auto/work, gated. The merge is
// made with --no-commit and committed only after the gates pass on the merged
// tree, so auto/work only ever moves to gated states: a kill between merge
// and gate leaves a half-done merge in the staging worktree, which the next
// drain aborts (staging/branch.ts), and nothing has landed.
import * as path from 'node:path';
import type { Clock, FsPort, ProcessPort } from '../ports.js';
import type { Git } from '../git/git.js';
import type { Task, TaskId } from '../types.js';
import { superviseAgent } from '../agent/supervise.js';
import { reportingProcess, type AgentProcessEvent } from '../agent/run-task.js';
import { readBoard, findTask } from '../board/read.js';
import { ensureBlockedStatusFile, updateTaskFile } from '../board/write.js';
import { addLabel, appendNote, setStatus } from '../board/edit.js';
import { NO_REASON, PARKED_LABEL, parkNote } from '../board/parking.js';
import { isUnreadable, lastBlockedParagraph, parseTaskFile } from '../board/parse.js';
import { BLOCKED_STATUS } from '../board/readiness.js';
import { judgeCandidate } from './protected-paths.js';
import { changedSinceFork, protectedPathsDrift } from './integrate-guard.js';
import { conflictOutcome, judgeMergedTree, type GateResult, type IntegrationOutcome } from './verdict/after-integration.js';
import { isAncestor, resolveCommit } from '../git/refs.js';
import { abortMerge, conflictedFiles, mergeNoCommit } from '../git/merge.js';
import { commitIndex, resetAndClean, stagePaths } from '../git/tree.js';

export interface IntegratorDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly git: Git;
  /** The gate's process and its end, for the drain's records (a killed drain's gate is reaped by the next). */
  readonly onGateProcess?: (taskId: TaskId, event: AgentProcessEvent) => void | Promise<void>;
  /** Each run of the gates script, with the tasks it judged together. */
  readonly onGateRun?: (tasks: readonly TaskId[], gate: GateResult) => void;
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

/**
 * Runs the gates script in dir over the tasks merged there (the first names
 * the gate's process record). A missing or non-executable script is red, never green.
 */
export async function runGate(deps: IntegratorDeps, dir: string, gate: GateSpec, tasks: readonly TaskId[]): Promise<GateResult> {
  const taskId = tasks[0]!;
  if (gate.script === undefined) return { ok: true, detail: 'no gates configured', tail: '', durationMs: 0 };
  const script = path.join(dir, gate.script);
  const stat = await deps.fs.stat(script);
  if (!stat) return { ok: false, detail: `gates script ${gate.script} does not exist`, tail: `gates script ${gate.script} does not exist; add it or set "gates" in .agent/config.json`, durationMs: 0 };
  if ((stat.mode & 0o111) === 0) return { ok: false, detail: `gates script ${gate.script} is not executable`, tail: `gates script ${gate.script} is not executable; chmod +x it and commit`, durationMs: 0 };
  const lines: string[] = [];
  const started = deps.clock.now();
  const run = await superviseAgent(
    { process: reportingProcess(deps.process, deps.onGateProcess && ((event) => deps.onGateProcess!(taskId, event))), clock: deps.clock },
    { program: script, args: [], env: { ...gate.env, AGENT_RUNNER_GATE: '1' }, cwd: dir },
    { idleTimeoutMs: gate.timeoutMs, wallClockMs: gate.timeoutMs, killGraceMs: 5000 },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 200) lines.shift();
    },
  );
  const durationMs = deps.clock.now() - started;
  const tail = lines.slice(-TAIL_LINES).join('\n');
  const result: GateResult =
    run.endedBy !== 'exit'
      ? { ok: false, detail: `gates timed out (${run.endedBy})`, tail, durationMs }
      : run.exitCode !== 0
        ? { ok: false, detail: `gates exited ${run.exitCode ?? run.signal}`, tail, durationMs }
        : { ok: true, detail: 'gates passed', tail, durationMs };
  deps.onGateRun?.(tasks, result);
  return result;
}

export interface LandingMeta {
  readonly task: Pick<Task, 'id' | 'title'>;
  /** Only a branch recovered from an interrupted drain can already be on auto/work. */
  readonly mayBeLanded?: boolean;
  readonly branch: string;
  readonly runId: string;
  readonly gatesScript: string | undefined;
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
    '',
  ].join('\n');
}

/** Back to auto/work as it was: the merge abandoned, the tree exactly at `to`. */
export async function abandonMerge(git: Git, dir: string, to: string): Promise<void> {
  await abortMerge(git, dir);
  await resetAndClean(git, dir, to);
}

/** Merges a task branch into auto/work (checked out in stagingDir) and gates it. */
export async function integrateBranch(deps: IntegratorDeps, stagingDir: string, meta: LandingMeta, gate: GateSpec): Promise<IntegrationOutcome> {
  const { git } = deps;
  const before = (await resolveCommit(git, stagingDir, 'HEAD'))!;
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
    const result = await runGate(deps, stagingDir, gate, [meta.task.id]);
    ran = { result, headMoved: (await resolveCommit(git, stagingDir, 'HEAD')) !== before };
  }
  const verdict = judgeMergedTree(drift, ran);
  if (verdict.kind === 'reject') {
    await abandonMerge(git, stagingDir, before);
    return { kind: 'gate-failed', gate: verdict.gate };
  }
  await commitIndex(git, stagingDir, landingMessage(meta, verdict.gate));
  const after = await git.treeState(stagingDir);
  const commit = after.head!;
  // Whatever the gates built or changed is not part of the landing.
  if (after.dirty) await resetAndClean(git, stagingDir, commit);
  return { kind: 'landed', commit, gate: verdict.gate };
}

/**
 * Edits one task's file on auto/work (with the board's own size guard) and
 * commits it (park, block). Returns the commit, or undefined when the task is gone.
 */
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
  if (!(await updateTaskFile(deps.fs, stagingDir, task, edit))) return resolveCommit(deps.git, stagingDir, 'HEAD');
  await stagePaths(deps.git, stagingDir, [task.file]);
  // The backlog CLI refuses a status its config does not list.
  const config = alsoEnsureBlockedStatus ? await ensureBlockedStatusFile(deps.fs, stagingDir) : undefined;
  if (config) await stagePaths(deps.git, stagingDir, [config]);
  await commitIndex(deps.git, stagingDir, message);
  return resolveCommit(deps.git, stagingDir, 'HEAD');
}

/** Parks a task on auto/work: label `parked` and a note with the reason and the branch. */
export function parkTask(deps: IntegratorDeps, stagingDir: string, taskId: TaskId, reason: string, branch: string): Promise<string | undefined> {
  const oneLine = reason.replace(/\s+/g, ' ').trim();
  return commitTaskEdit(deps, stagingDir, taskId, (text) => appendNote(addLabel(text, PARKED_LABEL), parkNote(oneLine, branch)), `Park ${taskId}: ${oneLine.slice(0, 120)}`);
}

/** Commits Blocked and its reason (whole, every line) onto auto/work, so the task stops recurring. */
export function blockTask(deps: IntegratorDeps, stagingDir: string, taskId: TaskId, reason: string): Promise<string | undefined> {
  const whole = reason.replace(/\r\n?/g, '\n').trim() || NO_REASON;
  const oneLine = whole.replace(/\s+/g, ' ');
  return commitTaskEdit(
    deps,
    stagingDir,
    taskId,
    (text) => {
      const blocked = setStatus(text, BLOCKED_STATUS);
      // Written once: only a Blocked note of the notes already saying it counts (not the reason's words elsewhere in the file).
      const parsed = parseTaskFile('', blocked);
      const notes = isUnreadable(parsed) ? '' : parsed.notes;
      return lastBlockedParagraph(notes.split('\n')) === whole ? blocked : appendNote(blocked, `Blocked: ${whole}`);
    },
    `Block ${taskId}: ${oneLine.slice(0, 120)}`,
    true,
  );
}
