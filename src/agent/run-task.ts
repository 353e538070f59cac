// The iteration loop for one task in one tree: prompt -> supervised agent
// session -> read the task's status back -> stop, or go again. The watchdog
// itself lives in supervise.ts; this file decides what a session meant.
import * as path from 'node:path';
import type { Ports, ProcessPort, StartedProcess } from '../ports.js';
import type { AgentAdapter, AgentResult, RepoConfig, RunOutcome, Task, TaskId } from '../types.js';
import type { Git } from '../git/git.js';
import { readBoard, findTask } from '../board/read.js';
import { BLOCKED_STATUS, DONE_STATUS, sameStatus } from '../board/status.js';
import { blockedReason } from '../board/parking.js';
import { sameTaskId } from '../board/task-id.js';
import { buildPrompt } from './prompt.js';
import { resolveModelChoice } from '../repo/config.js';
import { superviseAgent, type StreamBudget } from './supervise.js';
import { taskEnv } from './env.js';
import { Transcript } from './transcript.js';
import { brokerSessionId } from './adapters/index.js';

/** A session as it ended, for whoever keeps the books (the drain's SessionGuard). */
export interface SessionEnd {
  readonly iteration: number;
  readonly result: AgentResult;
  /** ms since the epoch. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly model: string | undefined;
  readonly effort: string | undefined;
  /** What the session meant for the task (undefined: go on with another session). */
  readonly judged: RunOutcome | undefined;
  /** What the session was for: the task's own work, or a fix round after review. */
  readonly role: SessionRole;
}

/** What a session of an implementing agent is for (the reviewer's sessions run elsewhere: drain/review/). */
export type SessionRole = 'implement' | 'fix';

/** After a session: go on as judged, run the same session again (a rate limit; not counted), or end the run so. */
export type SessionFollowUp =
  | { readonly kind: 'go-on' }
  | { readonly kind: 'again'; readonly reason: string }
  | { readonly kind: 'end'; readonly outcome: RunOutcome };

export interface SessionRecord {
  readonly iteration: number;
  readonly result: AgentResult;
  readonly durationMs: number;
}

export interface RunReport {
  readonly taskId: TaskId;
  readonly outcome: RunOutcome;
  readonly sessions: readonly SessionRecord[];
  readonly transcript: string;
  readonly model: string | undefined;
  readonly effort: string | undefined;
  /** The agent left uncommitted changes behind (see drain/uncommitted.ts). */
  readonly leftovers: boolean;
}

export interface RunTaskInput {
  readonly workspace: string;
  readonly task: Task;
  readonly config: RepoConfig;
  readonly adapter: AgentAdapter;
  /** The resolved agent binary. */
  readonly binary: string;
  /** The agent's whole environment before the task variables are added. */
  readonly env: Readonly<Record<string, string>>;
  readonly iterations: number;
  readonly transcriptFile: string;
  readonly runId: string;
  readonly retryReason?: string;
  /** implement (default), or fix: a review's findings answered on the same branch. */
  readonly role?: SessionRole;
  /** The prompt instead of the task's own (a fix round's, which carries the review's findings). */
  readonly prompt?: string;
  /** Values redacted from every transcript line. */
  readonly secrets: readonly string[];
  /** The run's provider broker (http://127.0.0.1:PORT): every session is pointed at it in place of a login. */
  readonly brokerUrl?: string;
  /** Awaited before every session (a rate-limit wait); an outcome ends the run instead. */
  readonly beforeSession?: () => Promise<RunOutcome | undefined>;
  /** USD the next session may spend (the task's budget left); undefined: no cap. Asked after beforeSession. */
  readonly sessionBudgetUsd?: () => number | undefined;
  /** Told every session as it ends; decides what follows it. */
  readonly afterSession?: (session: SessionEnd) => SessionFollowUp;
  /** Told the pid of each agent process as it starts, and when it ends. */
  readonly onAgentProcess?: (event: AgentProcessEvent) => void | Promise<void>;
  /**
   * Where the tree is another identity's (the agent's own repository), the runner cannot read it: the base prompt,
   * the commit the task starts at and how the tree stands after a session come from these instead.
   */
  readonly elsewhere?: {
    readonly basePrompt: string | undefined;
    readonly startHead: string;
    readonly readTree: () => Promise<TreeState>;
  };
}

export interface AgentProcessEvent {
  readonly pid: number;
  readonly ended: boolean;
  /** Signals the agent's whole process group (for a drain that is being stopped). */
  readonly signalGroup: (signal: 'SIGTERM' | 'SIGKILL') => void;
}

export interface RunDeps {
  readonly ports: Pick<Ports, 'process' | 'fs' | 'clock'>;
  readonly git: Git;
}

export interface TreeState {
  readonly head: string | undefined;
  /** Uncommitted changes in the tree. */
  readonly dirty: boolean;
  readonly status: string | undefined;
  readonly task: Task | undefined;
  readonly unreadable: string | undefined;
}

async function readTreeState(deps: RunDeps, workspace: string, taskId: TaskId): Promise<TreeState> {
  const { head, dirty } = await deps.git.treeState(workspace);
  const board = await readBoard(deps.ports.fs, workspace);
  const task = findTask(board, taskId);
  if (task) return { head, dirty, status: task.status, task, unreadable: undefined };
  const broken = board.unreadable.find((entry) => entry.id !== undefined && sameTaskId(entry.id, taskId));
  return {
    head,
    dirty,
    status: undefined,
    task: undefined,
    unreadable: broken ? `${broken.file}: ${broken.reason}` : `task ${taskId} is no longer on the board`,
  };
}

/** Pure: what one session meant, given the tree before and after it. */
export function judgeSession(before: TreeState, after: TreeState, result: AgentResult): RunOutcome | undefined {
  if (after.unreadable)
    return { kind: 'unreadable', reason: `task status unreadable after the session: ${after.unreadable}` };
  if (sameStatus(after.status, DONE_STATUS)) return { kind: 'done' };
  if (sameStatus(after.status, BLOCKED_STATUS))
    return { kind: 'blocked', reason: blockedReason(after.task, result.finalMessage) };
  if (!result.ok)
    return {
      kind: 'agent-failed',
      reason: `${result.failure ?? 'failed'}${result.detail ? `: ${result.detail}` : ''}`,
    };
  if (after.head === before.head && after.status === before.status) {
    return { kind: 'stalled', reason: 'stalled: the session changed nothing (no commit, no task status change)' };
  }
  return undefined;
}

/**
 * A process port that reports every process it starts (and its end), so a drain can record it for whoever cleans up
 * after a crash.
 */
export function reportingProcess(process: ProcessPort, onAgentProcess: RunTaskInput['onAgentProcess']): ProcessPort {
  if (!onAgentProcess) return process;
  return {
    ...process,
    start(command, handlers): StartedProcess {
      const started = process.start(command, handlers);
      const signalGroup = (signal: 'SIGTERM' | 'SIGKILL') => started.signalGroup(signal);
      void onAgentProcess({ pid: started.pid, ended: false, signalGroup });
      void started.exited.then(() => onAgentProcess({ pid: started.pid, ended: true, signalGroup }));
      return started;
    },
  };
}

/** The runner's own budget check on the stream: only for an adapter that can read a cost from it. */
function sessionBudget(adapter: AgentAdapter, maxUsd: number | undefined): StreamBudget | undefined {
  if (maxUsd === undefined || !adapter.costReported) return undefined;
  const costOf = adapter.costReported.bind(adapter);
  return { maxUsd, costOf };
}

export async function runTask(deps: RunDeps, input: RunTaskInput): Promise<RunReport> {
  const { fs, clock } = deps.ports;
  await fs.mkdirp(path.dirname(input.transcriptFile), 0o700);
  const transcript = new Transcript(fs, clock, input.transcriptFile, input.secrets);
  const choice = resolveModelChoice(input.config, input.task);
  const role = input.role ?? 'implement';
  const elsewhere = input.elsewhere;
  const basePrompt = elsewhere
    ? elsewhere.basePrompt
    : await fs.readTextIfExists(path.join(input.workspace, input.config.prompt));
  const readTree = elsewhere ? elsewhere.readTree : () => readTreeState(deps, input.workspace, input.task.id);
  const sessions: SessionRecord[] = [];
  const process = reportingProcess(deps.ports.process, input.onAgentProcess);
  let outcome: RunOutcome | undefined;

  transcript.write({
    event: 'run-start',
    runId: input.runId,
    taskId: input.task.id,
    assistant: input.adapter.name,
    role,
    model: choice.model ?? null,
    modelSource: choice.modelSource,
    effort: choice.effort ?? null,
    effortSource: choice.effortSource,
    iterations: input.iterations,
    retryReason: input.retryReason ?? null,
  });

  // A label asking for an effort the assistant refuses: no session on a guess (the same check as config and flags).
  if (choice.problem) outcome = { kind: 'unreadable', reason: choice.problem };
  // The first session starts from the task as given; later ones from what the previous one left.
  let before: TreeState = {
    head: elsewhere ? elsewhere.startHead : await deps.git.resolve(input.workspace, 'HEAD'),
    dirty: false,
    status: input.task.status,
    task: input.task,
    unreadable: undefined,
  };
  for (let iteration = 1; iteration <= input.iterations && !outcome;) {
    const held = await input.beforeSession?.();
    if (held) {
      outcome = held;
      break;
    }
    const budgetUsd = input.sessionBudgetUsd?.();
    const prompt =
      input.prompt ??
      buildPrompt({
        basePrompt,
        task: input.task,
        ...(input.retryReason ? { retryReason: input.retryReason } : {}),
      });
    const command = input.adapter.buildCommand({
      binary: input.binary,
      prompt,
      workspace: input.workspace,
      taskId: input.task.id,
      model: choice.model,
      effort: choice.effort,
      env: taskEnv(input.env, input.task.id, input.workspace),
      role,
      ...(input.config.command ? { command: input.config.command } : {}),
      ...(budgetUsd !== undefined ? { maxBudgetUsd: budgetUsd } : {}),
      ...(input.brokerUrl !== undefined
        ? {
            broker: {
              url: input.brokerUrl,
              // Numbered by sessions started, so a session run again after a rate limit has an id of its own.
              session: brokerSessionId(input.runId, input.task.id, role, sessions.length + 1),
            },
          }
        : {}),
    });
    transcript.write({
      event: 'session-start',
      iteration,
      program: command.program,
      args: command.args,
      cwd: command.cwd,
      ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    });
    const started = clock.now();
    const run = await superviseAgent(
      { process, clock },
      command,
      {
        idleTimeoutMs: input.config.agentIdleTimeoutSec * 1000,
        wallClockMs: input.config.agentWallClockSec * 1000,
        killGraceMs: 5000,
      },
      (stream, line) => transcript.write({ event: 'output', stream, line }),
      sessionBudget(input.adapter, budgetUsd),
    );
    const result = input.adapter.parseResult(run);
    const durationMs = clock.now() - started;
    sessions.push({ iteration, result, durationMs });
    transcript.write({
      event: 'session-end',
      iteration,
      exitCode: run.exitCode,
      signal: run.signal,
      endedBy: run.endedBy,
      durationMs,
      result,
    });
    const after = await readTree();
    const judged = judgeSession(before, after, result);
    before = after;
    const followUp = input.afterSession?.({
      iteration,
      result,
      startedAt: started,
      endedAt: started + durationMs,
      model: choice.model,
      effort: choice.effort,
      judged,
      role,
    }) ?? { kind: 'go-on' };
    if (followUp.kind === 'again') {
      transcript.write({ event: 'session-again', iteration, reason: followUp.reason });
      continue;
    }
    outcome = followUp.kind === 'end' ? followUp.outcome : judged;
    iteration++;
  }
  const leftovers = before.dirty;
  outcome ??= { kind: 'unfinished', reason: `the task is not Done after ${input.iterations} session(s)` };
  transcript.write({ event: 'run-end', outcome });
  await transcript.flush();
  return {
    taskId: input.task.id,
    outcome,
    sessions,
    transcript: input.transcriptFile,
    model: choice.model,
    effort: choice.effort,
    leftovers,
  };
}
