// One task's life in a drain: a worktree cut from auto/work on auto/<id>,
// the setup command, the agent, then what its status says. Integration is
// not done here: the worker hands a Done task to the integrator.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { AgentAdapter, RepoConfig, Task } from '../types.js';
import type { Git } from '../git/git.js';
import type { AgentProcessEvent, RunOutcome } from '../agent/run-task.js';
import { runTask } from '../agent/run-task.js';
import { superviseAgent } from '../agent/supervise.js';
import { commitLeftovers } from './leftovers.js';
import { STAGING_BRANCH, taskBranch } from '../staging/branch.js';
import { transcriptFile, worktreesDir } from '../paths.js';
import type { Mutex } from './mutex.js';

export interface WorkerContext {
  readonly ports: Ports;
  readonly git: Git;
  readonly workspace: string;
  readonly stateDir: string;
  readonly config: RepoConfig;
  readonly adapter: AgentAdapter;
  readonly binary: string;
  readonly env: Readonly<Record<string, string>>;
  readonly secrets: readonly string[];
  readonly runId: string;
  /** Serializes short ref-changing git operations (worktree add/remove, branch delete). */
  readonly refs: Mutex;
  readonly onAgentProcess: (task: Task, event: AgentProcessEvent) => void | Promise<void>;
}

export interface WorkerResult {
  readonly task: Task;
  readonly worktree: string;
  readonly branch: string;
  readonly outcome: RunOutcome | { readonly kind: 'setup-failed'; readonly reason: string };
  readonly transcript: string | undefined;
}

export function taskWorktree(workspace: string, taskId: string): string {
  return path.join(worktreesDir(workspace), taskId);
}

/** Removes a task's worktree and (optionally) its branch; tolerant of either being gone already. */
export async function removeTaskWorktree(context: Pick<WorkerContext, 'git' | 'ports' | 'workspace' | 'refs'>, taskId: string, deleteBranch: boolean): Promise<void> {
  await context.refs.run(async () => {
    await dropWorktree(context, taskWorktree(context.workspace, taskId));
    if (deleteBranch) await context.git.try(context.workspace, ['branch', '-D', taskBranch(taskId)]);
  });
}

/** The worktree and its folder gone; git's bookkeeping pruned only when git could not remove it itself. */
async function dropWorktree(context: Pick<WorkerContext, 'git' | 'ports' | 'workspace'>, dir: string): Promise<void> {
  if (!(await context.ports.fs.stat(dir))) return;
  const removed = await context.git.try(context.workspace, ['worktree', 'remove', '--force', '--force', dir]);
  if (removed.exitCode === 0) return;
  await context.ports.fs.remove(dir);
  await context.git.try(context.workspace, ['worktree', 'prune']);
}

async function runSetup(context: WorkerContext, dir: string): Promise<string | undefined> {
  const setup = context.config.setup;
  if (!setup) return undefined;
  const argv = typeof setup === 'string' ? [path.join(dir, setup)] : [...setup];
  const lines: string[] = [];
  const run = await superviseAgent(
    { process: context.ports.process, clock: context.ports.clock },
    { program: argv[0]!, args: argv.slice(1), env: context.env, cwd: dir },
    { idleTimeoutMs: context.config.agentIdleTimeoutSec * 1000, wallClockMs: context.config.agentWallClockSec * 1000, killGraceMs: 5000 },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 20) lines.shift();
    },
  );
  if (run.endedBy === 'exit' && run.exitCode === 0) return undefined;
  return `setup ${argv.join(' ')} failed (${run.endedBy === 'exit' ? `exit ${run.exitCode ?? run.signal}` : run.endedBy}): ${lines.slice(-3).join(' | ')}`;
}

export async function workOnTask(context: WorkerContext, task: Task, retryReason: string | undefined): Promise<WorkerResult> {
  const dir = taskWorktree(context.workspace, task.id);
  const branch = taskBranch(task.id);
  await context.refs.run(async () => {
    await dropWorktree(context, dir);
    await context.ports.fs.mkdirp(path.dirname(dir), 0o700);
    // -B: a retry starts over from the current auto/work, not from the last attempt.
    // --no-checkout: only the cheap ref and bookkeeping part runs under the lock.
    const add = ['worktree', 'add', '--quiet', '--no-checkout', '-B', branch, dir, `refs/heads/${STAGING_BRANCH}`];
    if ((await context.git.try(context.workspace, add)).exitCode !== 0) {
      // A registration whose folder is gone blocks the add: prune it and try once more.
      await context.git.try(context.workspace, ['worktree', 'prune']);
      await context.git.run(context.workspace, add);
    }
  });
  // The checkout itself, in parallel with other tasks' work.
  await context.git.run(dir, ['reset', '--quiet', '--hard', 'HEAD']);
  const setupFailure = await runSetup(context, dir);
  if (setupFailure) return { task, worktree: dir, branch, outcome: { kind: 'setup-failed', reason: setupFailure }, transcript: undefined };

  const report = await runTask(
    { ports: context.ports, git: context.git },
    {
      workspace: dir,
      task,
      config: context.config,
      adapter: context.adapter,
      binary: context.binary,
      env: context.env,
      iterations: 1,
      transcriptFile: transcriptFile(context.stateDir, context.workspace, context.runId, task.id),
      runId: context.runId,
      secrets: context.secrets,
      ...(retryReason ? { retryReason } : {}),
      onAgentProcess: (event) => context.onAgentProcess(task, event),
    },
  );
  if (report.leftovers && (report.outcome.kind === 'done' || report.outcome.kind === 'blocked')) await commitLeftovers(context.git, dir, task.id);
  return { task, worktree: dir, branch, outcome: report.outcome, transcript: report.transcript };
}
