// One task's life in a drain: a worktree cut from auto/work on auto/<id>,
// the setup command, the agent, then what its status says. Integration is
// not done here: the worker hands a Done task to the integrator.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { AgentAdapter, AgentFailure, RepoConfig, Task } from '../types.js';
import type { Git } from '../git/git.js';
import { type AgentProcessEvent, reportingProcess, runTask } from '../agent/run-task.js';
import { superviseAgent } from '../agent/supervise.js';
import { commitLeftovers } from './uncommitted.js';
import { cutTaskWorktree, type SpareWorktrees } from '../staging/task-branches.js';
import { transcriptFile } from '../paths.js';
import type { Mutex } from './mutex.js';
import type { WorkOutcome } from './verdict/index.js';
import type { SessionGuard } from './session-guard.js';

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
  /** Finished tasks' worktrees, reused for the next tasks (task-branches.ts). */
  readonly spares?: SpareWorktrees;
  /** Every agent and setup process a task starts, and its end (the drain records them). */
  readonly onProcess: (task: Task, event: AgentProcessEvent, kind: 'agent' | 'setup') => void | Promise<void>;
  /** The drain's books on sessions: rate-limit waits, budgets, the ledger reports. */
  readonly sessions?: SessionGuard;
}

export interface WorkerResult {
  readonly outcome: WorkOutcome;
  /** The adapter's typed failure, when the agent itself failed (outcome agent-failed). */
  readonly failure: AgentFailure | undefined;
}

async function runSetup(context: WorkerContext, task: Task, dir: string): Promise<string | undefined> {
  const setup = context.config.setup;
  if (!setup) return undefined;
  const argv = typeof setup === 'string' ? [path.join(dir, setup)] : [...setup];
  const lines: string[] = [];
  const run = await superviseAgent(
    {
      process: reportingProcess(context.ports.process, (event) => context.onProcess(task, event, 'setup')),
      clock: context.ports.clock,
    },
    { program: argv[0]!, args: argv.slice(1), env: context.env, cwd: dir },
    {
      idleTimeoutMs: context.config.agentIdleTimeoutSec * 1000,
      wallClockMs: context.config.agentWallClockSec * 1000,
      killGraceMs: 5000,
    },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 20) lines.shift();
    },
  );
  if (run.endedBy === 'exit' && run.exitCode === 0) return undefined;
  return `setup ${argv.join(' ')} failed (${run.endedBy === 'exit' ? `exit ${run.exitCode ?? run.signal}` : run.endedBy}): ${lines.slice(-3).join(' | ')}`;
}

export async function workOnTask(
  context: WorkerContext,
  task: Task,
  retryReason: string | undefined,
): Promise<WorkerResult> {
  const dir = await cutTaskWorktree(context, task.id);
  const setupFailure = await runSetup(context, task, dir);
  if (setupFailure) return { outcome: { kind: 'setup-failed', reason: setupFailure }, failure: undefined };

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
      onAgentProcess: (event) => context.onProcess(task, event, 'agent'),
      ...(context.sessions
        ? {
            beforeSession: () => context.sessions!.beforeSession(task),
            sessionBudgetUsd: () => context.sessions!.budgetLeft(task),
            afterSession: (session) => context.sessions!.afterSession(task, session),
          }
        : {}),
    },
  );
  if (report.leftovers && (report.outcome.kind === 'done' || report.outcome.kind === 'blocked'))
    await commitLeftovers(context.git, dir, task.id);
  // The session that ended the run is the last one; its result says how the agent failed, typed.
  const failure = report.outcome.kind === 'agent-failed' ? report.sessions.at(-1)?.result.failure : undefined;
  return { outcome: report.outcome, failure };
}
