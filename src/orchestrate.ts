// orchestrate --drain / --task: lock the workspace, prepare auto/work, clean
// up what a killed drain left, drain the board through parallel workers and
// the serialized integrator, publish, and write the drain's summary.
import * as path from 'node:path';
import type { Ports } from './ports.js';
import type { AgentAdapter, RepoConfig, Task, TaskId } from './types.js';
import type { Git } from './git.js';
import { acquireWorkspaceLock } from './workspace-lock.js';
import { fetchAndResolveBase, prepareStaging, publishStaging, STAGING_BRANCH } from './staging.js';
import { readBoard } from './board/read.js';
import { drainLoop } from './parallel.js';
import { Mutex } from './mutex.js';
import { removeTaskWorktree, workOnTask, type WorkerContext } from './task-worker.js';
import { blockTask, integrateBranch, parkTask, type GateSpec } from './integrate.js';
import { forget, readAttempts, recordConflictRetry, recordFailure, writeAttempts, type Attempts } from './attempts.js';
import { recoverTaskBranches } from './recovery.js';
import { workspaceStateDir } from './paths.js';
import type { DrainEvent, DrainSummary, TaskSummary, TaskOutcome } from './drain-types.js';
import { lastDrainFile, agentRecordFile, readAgentRecords } from './drain-records.js';
import { reapGroups } from './control/reap.js';
import type { ProcessControl } from './control/ports.js';

export interface OrchestrateInput {
  readonly workspace: string;
  readonly config: RepoConfig;
  readonly only: TaskId | undefined;
  readonly push: boolean;
  readonly force: boolean;
  readonly runId: string;
  /** The agent's base environment (clean; see agent-env.ts). */
  readonly env: Readonly<Record<string, string>>;
  readonly secrets: readonly string[];
  readonly stateDir: string;
  readonly adapter: AgentAdapter;
  readonly binary: string;
  readonly onEvent: (event: DrainEvent) => void;
  /** Aborted when the drain must stop (SIGTERM): start nothing new, then end running agents after graceMs. */
  readonly stop: AbortSignal;
  readonly graceMs: number;
  /** This process's pid, recorded in the workspace lock. */
  readonly pid: number;
  /** Signals process groups this drain did not start (agents a killed drain left running). */
  readonly control: Pick<ProcessControl, 'signalGroup'>;
}

/** Agent failures that say nothing about the task: stop the drain instead of counting attempts. */
const SYSTEMIC = /^(not-logged-in|rate-limited)\b/;

export async function orchestrate(ports: Ports, git: Git, input: OrchestrateInput): Promise<DrainSummary> {
  const { fs, clock, process } = ports;
  const wsState = workspaceStateDir(input.stateDir, input.workspace);
  await fs.mkdirp(path.join(wsState, 'agents'), 0o700);
  const lock = await acquireWorkspaceLock({ fs, process }, path.join(wsState, 'orchestrate.lock'), {
    pid: input.pid,
    startTime: await process.startTimeOf(input.pid),
    since: new Date(clock.now()).toISOString(),
    purpose: `orchestrate ${input.runId}`,
  });
  const startedAt = clock.now();
  await reapOrphanedAgents(ports, input, wsState);
  const emit = (event: Omit<DrainEvent, 'time' | 'runId'>) => input.onEvent({ time: new Date(clock.now()).toISOString(), runId: input.runId, ...event } as DrainEvent);
  const results = new Map<TaskId, TaskSummary>();
  let outcome: DrainSummary['outcome'] = 'drained';
  let failure: string | undefined;
  let staging = { base: '', head: '' };
  let pushed = false;
  let summary: DrainSummary | undefined;
  try {
    const refs = await fetchAndResolveBase(git, input.workspace, input.config.baseBranch, true);
    const remoteBefore = refs.hasOrigin ? await git.resolve(input.workspace, `refs/remotes/origin/${STAGING_BRANCH}`) : undefined;
    const prepared = await prepareStaging(git, fs, input.workspace, refs, input.config.workBranchMode, input.force);
    for (const note of prepared.recovered) emit({ event: 'recovered', detail: note });
    emit({ event: 'staging-ready', base: prepared.baseHead, head: prepared.head, created: prepared.created, mergedBase: prepared.mergedBase, reset: prepared.reset });
    const stagingDir = prepared.stagingDir;

    let attempts: Attempts = await readAttempts(fs, wsState);
    const integrator = new Mutex();
    const refsMutex = new Mutex();
    const excluded = new Set<TaskId>();
    const retryReasons = new Map<TaskId, string>();
    const running = new Map<TaskId, (signal: 'SIGTERM' | 'SIGKILL') => void>();
    let systemicFailure: string | undefined;
    const gate: GateSpec = { script: input.config.gates, env: input.env, timeoutMs: input.config.agentWallClockSec * 1000 };
    const integratorDeps = { process, fs, clock, git };

    const finish = (task: Pick<Task, 'id' | 'title'>, result: TaskOutcome, reason: string | undefined, started: number, commit?: string) => {
      const summary: TaskSummary = { id: task.id, title: task.title, outcome: result, ...(reason ? { reason } : {}), durationMs: clock.now() - started, ...(commit ? { stagingCommit: commit } : {}) };
      results.set(task.id, summary);
      emit({ event: `task-${result}`, taskId: task.id, title: task.title, ...(reason ? { reason } : {}), ...(commit ? { commit } : {}), durationMs: summary.durationMs });
    };
    const saveAttempts = async (next: Attempts) => {
      attempts = next;
      await writeAttempts(fs, wsState, attempts);
    };
    const park = async (task: Task, reason: string, started: number) => {
      const commit = await integrator.run(() => parkTask(integratorDeps, stagingDir, task.id, reason, `auto/${task.id}`));
      await saveAttempts(forget(attempts, task.id));
      excluded.add(task.id);
      finish(task, 'parked', reason, started, commit);
    };

    const context: WorkerContext = {
      ports, git, workspace: input.workspace, stateDir: input.stateDir, config: input.config, adapter: input.adapter,
      binary: input.binary, env: input.env, secrets: input.secrets, runId: input.runId, refs: refsMutex,
      onAgentProcess: async (task, event) => {
        const file = agentRecordFile(wsState, task.id);
        if (event.ended) {
          running.delete(task.id);
          await fs.remove(file);
          return;
        }
        running.set(task.id, event.signalGroup);
        const startTime = await process.startTimeOf(event.pid);
        await fs.writeAtomic(file, `${JSON.stringify({ pid: event.pid, startTime, taskId: task.id, runId: input.runId, startedAt: new Date(clock.now()).toISOString() })}\n`, 0o600);
      },
    };

    const runOne = async (task: Task) => {
      const started = clock.now();
      emit({ event: 'task-started', taskId: task.id, title: task.title, ...(retryReasons.has(task.id) ? { retry: retryReasons.get(task.id) } : {}) });
      const retryReason = retryReasons.get(task.id);
      retryReasons.delete(task.id);
      try {
        const work = await workOnTask(context, task, retryReason);
        const kind = work.outcome.kind;
        if (input.stop.aborted && kind !== 'done' && kind !== 'blocked') {
          await removeTaskWorktree(context, task.id, true);
          excluded.add(task.id);
          finish(task, 'interrupted', 'the drain was stopped', started);
          return;
        }
        if (kind === 'done') {
          const integration = await integrator.run(() => integrateBranch(integratorDeps, stagingDir, { task, branch: work.branch, runId: input.runId, gatesScript: input.config.gates }, gate));
          if (integration.kind === 'landed' || integration.kind === 'already-landed') {
            await saveAttempts(forget(attempts, task.id));
            await removeTaskWorktree(context, task.id, true);
            excluded.add(task.id);
            finish(task, 'landed', undefined, started, integration.commit);
          } else if (integration.kind === 'conflict') {
            const reason = `merge conflict in ${integration.files.join(', ')}`;
            if (!attempts[task.id]?.conflictRetried) {
              await saveAttempts(recordConflictRetry(attempts, task.id, reason));
              retryReasons.set(task.id, `${reason}; another task changed the same lines and landed first`);
              await removeTaskWorktree(context, task.id, true);
              emit({ event: 'task-retrying', taskId: task.id, title: task.title, reason });
            } else {
              await park(task, reason, started);
            }
          } else {
            const tail = integration.gate.tail.split('\n').filter(Boolean).slice(-3).join(' | ');
            await park(task, `gate failed: ${integration.gate.detail}${tail ? `: ${tail}` : ''}`, started);
          }
        } else if (kind === 'blocked') {
          const commit = await integrator.run(() => blockTask(integratorDeps, stagingDir, task.id, work.outcome.kind === 'blocked' ? work.outcome.reason : ''));
          await saveAttempts(forget(attempts, task.id));
          await removeTaskWorktree(context, task.id, true);
          excluded.add(task.id);
          finish(task, 'blocked', work.outcome.reason, started, commit);
        } else {
          const reason = work.outcome.reason;
          if (SYSTEMIC.test(reason)) {
            systemicFailure ??= `${task.id}: ${reason}`;
            await removeTaskWorktree(context, task.id, true);
            excluded.add(task.id);
            finish(task, 'failed', reason, started);
            return;
          }
          await saveAttempts(recordFailure(attempts, task.id, reason));
          if ((attempts[task.id]?.failures ?? 0) >= input.config.maxAttempts) {
            await park(task, `failed ${attempts[task.id]!.failures} time(s); last: ${reason}`, started);
          } else {
            await removeTaskWorktree(context, task.id, true);
            finish(task, 'failed', `${reason} (attempt ${attempts[task.id]!.failures} of ${input.config.maxAttempts})`, started);
          }
        }
      } catch (error) {
        // One task's internal error never stops the others; it counts as a failed attempt.
        const reason = `internal error: ${error instanceof Error ? error.message : String(error)}`;
        excluded.add(task.id);
        await saveAttempts(recordFailure(attempts, task.id, reason)).catch(() => undefined);
        finish(task, 'failed', reason, started);
      }
    };

    const pending = await recoverTaskBranches({ ports, git, workspace: input.workspace, stagingDir, refs: refsMutex });
    for (const note of pending.notes) emit({ event: 'recovered', detail: note });
    for (const task of pending.toIntegrate) {
      const started = clock.now();
      const integration = await integrator.run(() => integrateBranch(integratorDeps, stagingDir, { task, branch: `auto/${task.id}`, runId: input.runId, gatesScript: input.config.gates }, gate));
      if (integration.kind === 'landed' || integration.kind === 'already-landed') {
        await removeTaskWorktree(context, task.id, true);
        excluded.add(task.id);
        finish(task, 'landed', 'recovered: integrated the finished work of an interrupted drain', started, integration.commit);
      } else {
        // Not clean any more: drop it; the task is still To Do on auto/work and runs again.
        await removeTaskWorktree(context, task.id, true);
        emit({ event: 'recovered', detail: `${task.id}: finished work from an interrupted drain no longer integrates (${integration.kind}); it will run again` });
      }
    }

    let stopTimer: { cancel(): void } | undefined;
    const onStop = () => {
      emit({ event: 'stopping', detail: `stop requested; waiting up to ${Math.round(input.graceMs / 1000)}s for running agents` });
      stopTimer = clock.setTimer(input.graceMs, () => {
        for (const signalGroup of running.values()) signalGroup('SIGTERM');
        clock.setTimer(5000, () => {
          for (const signalGroup of running.values()) signalGroup('SIGKILL');
        });
      });
    };
    if (input.stop.aborted) onStop();
    else input.stop.addEventListener('abort', onStop, { once: true });

    await drainLoop(
      {
        readBoard: () => readBoard(fs, stagingDir),
        runTask: runOne,
        stopping: () => input.stop.aborted || systemicFailure !== undefined,
        excluded: () => excluded,
      },
      input.config.maxParallel,
      input.only,
    );
    stopTimer?.cancel();
    input.stop.removeEventListener('abort', onStop);

    if (input.only && !results.has(input.only) && ![...results.keys()].some((id) => id.toLowerCase() === input.only!.toLowerCase())) {
      const board = await readBoard(fs, stagingDir);
      const present = board.tasks.some((task) => task.id.toLowerCase() === input.only!.toLowerCase());
      failure = present ? `${input.only} is not ready; \`agent-runner next\` says why` : `no task ${input.only} on ${STAGING_BRANCH}`;
      outcome = 'failed';
    }
    if (systemicFailure) {
      outcome = 'failed';
      failure = `stopped: the agent cannot work (${systemicFailure}); fix it and run again`;
    } else if (input.stop.aborted) {
      outcome = 'interrupted';
    } else if (results.size === 0 && outcome !== 'failed') {
      outcome = 'nothing-to-do';
    }

    const head = (await git.resolve(stagingDir, 'HEAD'))!;
    staging = { base: prepared.baseHead, head };
    if (input.push && head !== remoteBefore) {
      const publish = await publishStaging(git, input.workspace, refs, remoteBefore);
      pushed = publish.pushed;
      emit({ event: pushed ? 'published' : 'publish-skipped', detail: publish.reason ?? `${STAGING_BRANCH} at ${head.slice(0, 12)}` });
      if (!pushed && refs.hasOrigin) {
        outcome = 'failed';
        failure = publish.reason;
      }
    }
  } catch (error) {
    outcome = 'failed';
    failure = error instanceof Error ? error.message : String(error);
    throw error;
  } finally {
    summary = {
      runId: input.runId,
      outcome,
      ...(failure ? { failure } : {}),
      tasks: [...results.values()],
      staging,
      pushed,
      startedAt: new Date(startedAt).toISOString(),
      endedAt: new Date(clock.now()).toISOString(),
    };
    await fs.writeAtomic(lastDrainFile(wsState), `${JSON.stringify(summary, null, 2)}\n`, 0o600).catch(() => undefined);
    await lock.release();
    emit({ event: 'drain-finished', outcome, ...(failure ? { reason: failure } : {}) });
  }
  return summary;
}

/** Ends agents a killed drain left running: they would keep writing into worktrees this drain removes. */
async function reapOrphanedAgents(ports: Ports, input: OrchestrateInput, wsState: string): Promise<void> {
  const { fs, clock, process } = ports;
  const orphans = await readAgentRecords(fs, wsState);
  const labelled = orphans.map((record) => ({ pid: record.pid, startTime: record.startTime, label: `agent ${record.taskId}` }));
  const reaped = orphans.length ? await reapGroups({ process, control: input.control, clock }, labelled, 5000) : [];
  for (const entry of reaped) {
    input.onEvent({ time: new Date(clock.now()).toISOString(), runId: input.runId, event: 'recovered', detail: `ended ${entry.label} (pid ${entry.pid}) left running by an interrupted drain` });
  }
  const dir = path.join(wsState, 'agents');
  // Records, and temp files of record writes a crash interrupted.
  for (const name of await fs.list(dir)) await fs.remove(path.join(dir, name));
}
