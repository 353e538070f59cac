// What happens to one task after its agent ends: Done goes through the
// integrator (landed, retried after a conflict, or parked), Blocked is
// committed onto auto/work, anything else is a counted failed attempt that
// parks the task after maxAttempts.
import type { Task } from '../types.js';
import type { Mutex } from './mutex.js';
import type { DrainBook } from './book.js';
import { blockTask, integrateBranch, parkTask, type GateSpec, type IntegratorDeps } from './integrate.js';
import { removeTaskWorktree, workOnTask, type WorkerContext } from './task-worker.js';
import { taskBranch } from '../staging/branch.js';

/** Agent failures that say nothing about the task: stop the drain instead of counting attempts. */
const SYSTEMIC = /^(not-logged-in|rate-limited)\b/;

export interface TaskFlow {
  readonly worker: WorkerContext;
  readonly integratorDeps: IntegratorDeps;
  /** One merge (or park, or block commit) at a time. */
  readonly integrator: Mutex;
  readonly stagingDir: string;
  readonly gate: GateSpec;
  readonly maxAttempts: number;
  readonly book: DrainBook;
  readonly stop: AbortSignal;
  /** Called once when the agent cannot work at all (not logged in, rate limited). */
  readonly onSystemicFailure: (reason: string) => void;
}

async function park(flow: TaskFlow, task: Task, reason: string, started: number): Promise<void> {
  const commit = await flow.integrator.run(() => parkTask(flow.integratorDeps, flow.stagingDir, task.id, reason, taskBranch(task.id)));
  await flow.book.settle(task.id);
  flow.book.finish(task, 'parked', reason, started, commit);
}

function integrate(flow: TaskFlow, task: Task, mayBeLanded = false) {
  const meta = { task, branch: taskBranch(task.id), runId: flow.worker.runId, gatesScript: flow.gate.script, mayBeLanded };
  return flow.integrator.run(() => integrateBranch(flow.integratorDeps, flow.stagingDir, meta, flow.gate));
}

async function integrateDone(flow: TaskFlow, task: Task, started: number): Promise<void> {
  const integration = await integrate(flow, task);
  if (integration.kind === 'landed' || integration.kind === 'already-landed') {
    await flow.book.settle(task.id);
    await removeTaskWorktree(flow.worker, task.id, true);
    flow.book.finish(task, 'landed', undefined, started, integration.commit);
  } else if (integration.kind === 'protected-paths') {
    await park(flow, task, integration.reason, started);
  } else if (integration.kind === 'conflict') {
    const reason = `merge conflict in ${integration.files.join(', ')}`;
    if (flow.book.conflictRetried(task.id)) return park(flow, task, reason, started);
    await flow.book.retryAfterConflict(task.id, reason, `${reason}; another task changed the same lines and landed first`);
    await removeTaskWorktree(flow.worker, task.id, true);
    flow.book.emit({ event: 'task-retrying', taskId: task.id, title: task.title, reason });
  } else {
    const tail = integration.gate.tail.split('\n').filter(Boolean).slice(-3).join(' | ');
    await park(flow, task, `gate failed: ${integration.gate.detail}${tail ? `: ${tail}` : ''}`, started);
  }
}

async function failedAttempt(flow: TaskFlow, task: Task, reason: string, started: number): Promise<void> {
  if (SYSTEMIC.test(reason)) {
    flow.onSystemicFailure(`${task.id}: ${reason}`);
    await removeTaskWorktree(flow.worker, task.id, true);
    flow.book.excluded.add(task.id);
    flow.book.finish(task, 'failed', reason, started);
    return;
  }
  const failures = await flow.book.failed(task.id, reason);
  if (failures >= flow.maxAttempts) return park(flow, task, `failed ${failures} time(s); last: ${reason}`, started);
  await removeTaskWorktree(flow.worker, task.id, true);
  flow.book.finish(task, 'failed', `${reason} (attempt ${failures} of ${flow.maxAttempts})`, started);
}

/** Runs one task to its end in this drain. Never throws: an internal error is a failed attempt. */
export async function runTaskFlow(flow: TaskFlow, task: Task, releaseSlot: () => void = () => undefined): Promise<void> {
  const started = flow.worker.ports.clock.now();
  const retryReason = flow.book.takeRetryReason(task.id);
  flow.book.emit({ event: 'task-started', taskId: task.id, title: task.title, ...(retryReason ? { retry: retryReason } : {}) });
  try {
    const work = await workOnTask(flow.worker, task, retryReason);
    // The agent is done: its slot goes to the next task while this one waits for the integrator.
    releaseSlot();
    const outcome = work.outcome;
    if (outcome.kind === 'done') return await integrateDone(flow, task, started);
    if (outcome.kind === 'blocked') {
      const commit = await flow.integrator.run(() => blockTask(flow.integratorDeps, flow.stagingDir, task.id, outcome.reason));
      await flow.book.settle(task.id);
      await removeTaskWorktree(flow.worker, task.id, true);
      return flow.book.finish(task, 'blocked', outcome.reason, started, commit);
    }
    if (flow.stop.aborted) {
      // Cut short by the stop, not a fault of the task: no attempt is counted.
      await removeTaskWorktree(flow.worker, task.id, true);
      return flow.book.finish(task, 'interrupted', 'the drain was stopped', started);
    }
    await failedAttempt(flow, task, outcome.reason, started);
  } catch (error) {
    const reason = `internal error: ${error instanceof Error ? error.message : String(error)}`;
    flow.book.excluded.add(task.id);
    await flow.book.failed(task.id, reason).catch(() => undefined);
    flow.book.finish(task, 'failed', reason, started);
  }
}

/** Finished work an interrupted drain left on its branch: integrated before anything new starts. */
export async function integrateRecovered(flow: TaskFlow, task: Task): Promise<void> {
  const started = flow.worker.ports.clock.now();
  const integration = await integrate(flow, task, true);
  // A branch parked for a human stays for review; any other is done with.
  await removeTaskWorktree(flow.worker, task.id, integration.kind !== 'protected-paths');
  if (integration.kind === 'landed' || integration.kind === 'already-landed') {
    await flow.book.settle(task.id);
    flow.book.finish(task, 'landed', 'recovered: integrated the finished work of an interrupted drain', started, integration.commit);
  } else if (integration.kind === 'protected-paths') {
    // Running it again would only produce the same change: a human decides.
    await park(flow, task, integration.reason, started);
  } else {
    // No longer clean: the task is still To Do on auto/work and simply runs again.
    flow.book.emit({ event: 'recovered', detail: `${task.id}: finished work from an interrupted drain no longer integrates (${integration.kind}); it will run again` });
  }
}
