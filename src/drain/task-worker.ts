// One task's life in a drain: its branch cut at auto/work's tip in the
// agent's own repository (a bundle, sides.ts), the setup command and the
// agent run there as the agent identity, then what its status says; a Done
// task's branch comes back as a bundle the runner checks before it exists in
// the runner's repository. Integration is not done here: the worker hands a
// Done task to the integrator.
import * as path from 'node:path';
import type { Ports } from '../ports.js';
import type { AgentAdapter, AgentFailure, RepoConfig, Task } from '../types.js';
import type { Git } from '../git/git.js';
import {
  type AgentProcessEvent,
  type RunReport,
  type SessionRole,
  reportingProcess,
  runTask,
} from '../agent/run-task.js';
import { runSetupCommand } from '../agent/setup.js';
import { transcriptFile } from '../paths.js';
import type { Mutex } from './mutex.js';
import type { WorkOutcome } from './verdict/index.js';
import type { SessionGuard } from './session-guard.js';
import type { Sides } from './sides.js';
import { SideStepError } from '../handoff/side.js';
import { Transcript } from '../agent/transcript.js';
import type { RemoteAttempts } from './remote.js';

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
  /** The agent's and gate's sides of the hand-off. */
  readonly sides: Sides;
  /** The commit a task starts at: auto/work as the runner last wrote it. */
  readonly startCommit: () => string;
  /** Every agent and setup process a task starts, and its end (the drain records them). */
  readonly onProcess: (task: Task, event: AgentProcessEvent, kind: 'agent' | 'setup') => void | Promise<void>;
  /** The drain's books on sessions: rate-limit waits, budgets, the ledger reports. */
  readonly sessions?: SessionGuard;
  /** The run's provider broker (http://127.0.0.1:PORT), where it has one: every model session is pointed at it. */
  readonly brokerUrl?: string;
  /** Where the repo's attempts run when not in the agent's repository on this host (a Kubernetes Job each). */
  readonly remote?: RemoteAttempts;
}

export interface WorkerResult {
  readonly outcome: WorkOutcome;
  /** The adapter's typed failure, when the agent itself failed (outcome agent-failed). */
  readonly failure: AgentFailure | undefined;
  /** The commit the task was cut from (auto/work at its start): what review diffs its candidate against. */
  readonly base: string;
}

function runSetup(context: WorkerContext, task: Task, dir: string): Promise<string | undefined> {
  const process = reportingProcess(context.sides.processOf('agent'), (event) =>
    context.onProcess(task, event, 'setup'),
  );
  return runSetupCommand({ process, clock: context.ports.clock }, context.config, context.env, dir);
}

/** The base prompt as auto/work holds it at the task's start (the runner's side: trusted, and the same tree). */
export async function basePromptAt(context: WorkerContext, commit: string): Promise<string | undefined> {
  const shown = await context.git.try(context.workspace, ['show', `${commit}:${context.config.prompt}`]);
  return shown.exitCode === 0 ? shown.stdout : undefined;
}

/**
 * The agent's session on a task in its checkout in the agent's repository, in the drain's books: the task's own work,
 * or (with role fix and its own prompt) a fix round after review.
 */
export function runAgentSessions(
  context: WorkerContext,
  task: Task,
  run: {
    readonly startHead: string;
    readonly basePrompt: string | undefined;
    readonly retryReason?: string;
    readonly role?: SessionRole;
    readonly prompt?: string;
  },
): Promise<RunReport> {
  const { sessions } = context;
  return runTask(
    { ports: { ...context.ports, process: context.sides.processOf('agent') }, git: context.git },
    {
      workspace: context.sides.agentDir(task.id),
      task,
      config: context.config,
      adapter: context.adapter,
      binary: context.binary,
      env: context.env,
      iterations: 1,
      transcriptFile: transcriptFile(context.stateDir, context.workspace, context.runId, task.id),
      runId: context.runId,
      secrets: context.secrets,
      ...(context.brokerUrl !== undefined ? { brokerUrl: context.brokerUrl } : {}),
      ...(run.retryReason ? { retryReason: run.retryReason } : {}),
      ...(run.role ? { role: run.role } : {}),
      ...(run.prompt !== undefined ? { prompt: run.prompt } : {}),
      onAgentProcess: (event) => context.onProcess(task, event, 'agent'),
      elsewhere: {
        basePrompt: run.basePrompt,
        startHead: run.startHead,
        readTree: () => context.sides.taskState(task),
      },
      ...(sessions
        ? {
            beforeSession: () => sessions.beforeSession(task),
            sessionBudgetUsd: () => sessions.budgetLeft(task),
            afterSession: (session) => sessions.afterSession(task, session),
          }
        : {}),
    },
  );
}

/** A task's work; a failed step on the agent's side is a failed attempt with git's words, not an internal error. */
export async function workOnTask(
  context: WorkerContext,
  task: Task,
  retryReason: string | undefined,
  failuresBefore = 0,
): Promise<WorkerResult> {
  if (context.remote) return workRemotely(context, context.remote, task, retryReason, failuresBefore);
  try {
    return await workInAgentRepository(context, task, retryReason);
  } catch (error) {
    if (!(error instanceof SideStepError)) throw error;
    return { outcome: { kind: 'side-failed', reason: error.message }, failure: undefined, base: context.startCommit() };
  }
}

async function workInAgentRepository(
  context: WorkerContext,
  task: Task,
  retryReason: string | undefined,
): Promise<WorkerResult> {
  const base = context.startCommit();
  const dir = await context.sides.prepareTask(task.id, base);
  const setupFailure = await runSetup(context, task, dir);
  if (setupFailure) return { outcome: { kind: 'setup-failed', reason: setupFailure }, failure: undefined, base };

  const report = await runAgentSessions(context, task, {
    startHead: base,
    basePrompt: await basePromptAt(context, base),
    ...(retryReason ? { retryReason } : {}),
  });
  // The session that ended the run is the last one; its result says how the agent failed, typed.
  const failure = report.outcome.kind === 'agent-failed' ? report.sessions.at(-1)?.result.failure : undefined;
  if (report.outcome.kind !== 'done') {
    // What a task that did not finish committed is kept on the runner's side, checked like any hand-over, so a
    // parked task's branch stays there for review (the agent's repository starts anew next drain). Nothing to keep,
    // or a refusal, changes nothing here: the task ends as its run did.
    const leftovers = report.leftovers && report.outcome.kind === 'blocked';
    await context.sides.handOver(task.id, base, leftovers).catch(() => undefined);
    return { outcome: report.outcome, failure, base };
  }
  // Done on the agent's side: the branch exists on the runner's only once its bundle passed every check.
  // The last look at the tree said whether the agent left anything uncommitted: only then is it committed for it.
  const accepted = await context.sides.handOver(task.id, base, report.leftovers);
  if (!accepted.accepted)
    return { outcome: { kind: 'handoff-refused', reason: accepted.reason }, failure: undefined, base };
  return { outcome: report.outcome, failure, base };
}

/** The attempt as a Job (or wherever `remote` runs it): its lines in the task's transcript, its outcome as here. */
async function workRemotely(
  context: WorkerContext,
  remote: RemoteAttempts,
  task: Task,
  retryReason: string | undefined,
  failuresBefore: number,
): Promise<WorkerResult> {
  const base = context.startCommit();
  const { fs, clock } = context.ports;
  const file = transcriptFile(context.stateDir, context.workspace, context.runId, task.id);
  await fs.mkdirp(path.dirname(file), 0o700);
  const transcript = new Transcript(fs, clock, file, context.secrets);
  try {
    const outcome = await remote.work(task, {
      base,
      failuresBefore,
      ...(retryReason ? { retryReason } : {}),
      transcript,
    });
    return { outcome, failure: undefined, base };
  } finally {
    await transcript.flush();
  }
}
