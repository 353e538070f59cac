// A task's trip through a drain: its worker runs the agent, the verdicts
// (verdict/) say what that means (integrate, block, fail, park, stop), a Done
// task goes through the integrator and its result is judged too, and every
// ending is applied through one path (applyVerdict): count a failure, commit
// onto auto/work, settle or record attempts, tidy the worktree, report.
import type { Task, TaskId } from '../types.js';
import {
  integrateBatch,
  type IntegrationQueue,
  integrateBranch,
  type LandingMeta,
  type GateSpec,
  type IntegratorDeps,
} from './integrate/index.js';
import {
  formBatch,
  afterAgent,
  afterInternalError,
  afterIntegration,
  afterRecoveredIntegration,
  afterReviewEnding,
  type IntegrationOutcome,
  planFor,
  type TaskVerdict,
} from './verdict/index.js';
import type { Mutex } from './mutex.js';
import type { DrainBook } from './book.js';
import { blockTask, parkTask } from './staging-board/index.js';
import { workOnTask, type WorkerContext } from './task-worker.js';
import { deleteBranch } from '../git/refs.js';
import { taskBranch } from '../staging/names.js';
import { redactDeep, redactSecrets } from '../agent/secrets.js';
import { reviewCandidate, type ReviewContext } from './review/index.js';
import { mergeBase, resolveCommit } from '../git/refs.js';

export interface TaskFlow {
  readonly worker: WorkerContext;
  readonly integratorDeps: IntegratorDeps;
  /** One merge (or park, or block commit) at a time. */
  readonly integrator: Mutex;
  /** Where finished tasks wait for the integrator, which takes them in batches (integrate/queue.ts). */
  readonly queue: IntegrationQueue;
  readonly stagingDir: string;
  readonly gate: GateSpec;
  readonly maxAttempts: number;
  /** The most finished tasks one gate run judges together. */
  readonly maxBatch: number;
  readonly book: DrainBook;
  readonly stop: AbortSignal;
  /** Called once when the agent cannot work at all (not logged in, rate limited). */
  readonly onSystemicFailure: (reason: string) => void;
  /** Review before integration (drain/review/); none: a Done task goes straight to the integrator. */
  readonly review?: Omit<ReviewContext, 'worker' | 'gate' | 'reviewed' | 'stop'>;
  /** The trailer of each task review approved in this drain, for its landing commit. */
  readonly approvals: Map<TaskId, string>;
}

/** What the integrator needs to know of a task to land it. */
export function landingMeta(
  flow: Pick<TaskFlow, 'worker' | 'gate' | 'approvals'>,
  task: Task,
  mayBeLanded = false,
): LandingMeta {
  // The landing commit's subject carries the title: redacted like every other sink.
  return {
    task: { id: task.id, title: redactSecrets(task.title, flow.worker.secrets) },
    branch: taskBranch(task.id),
    runId: flow.worker.runId,
    gatesScript: flow.gate.script,
    mayBeLanded,
    ...(flow.approvals.has(task.id) ? { review: flow.approvals.get(task.id)! } : {}),
  };
}

function reviewContext(flow: TaskFlow): ReviewContext | undefined {
  if (!flow.review) return undefined;
  const { book } = flow;
  return {
    ...flow.review,
    worker: flow.worker,
    gate: flow.gate,
    reviewed: (event) => book.reviewed(event),
    stop: flow.stop,
  };
}

/**
 * A Done task's candidate (its branch as the runner accepted it, cut from `fork`) reviewed: undefined when review
 * approved it (its trailer noted for the landing) or is off, else the verdict it comes to.
 */
async function reviewed(flow: TaskFlow, task: Task, fork: string, recovered = false): Promise<TaskVerdict | undefined> {
  const context = reviewContext(flow);
  if (!context) return undefined;
  const { worker } = flow;
  const candidate = await resolveCommit(worker.git, worker.workspace, taskBranch(task.id));
  if (!candidate)
    return afterReviewEnding({ kind: 'park', reason: `review: ${taskBranch(task.id)} is gone` }, recovered);
  const approved = await context.records.approvalOf(task.id, candidate);
  if (approved) {
    flow.approvals.set(task.id, approved);
    return undefined;
  }
  // A recovered branch has no checkout on the agent's side yet (its repository is new each drain).
  if (recovered) await worker.sides.prepareTask(task.id, candidate);
  const outcome = await reviewCandidate(context, task, fork, candidate);
  if (outcome.kind !== 'approved') return afterReviewEnding(outcome, recovered);
  flow.approvals.set(task.id, outcome.trailer);
  return undefined;
}

/** A recovered branch may already be on auto/work: it is integrated alone, before anything new. */
function integrateAlone(flow: TaskFlow, task: Task): Promise<IntegrationOutcome> {
  return flow.integrator.run(() =>
    integrateBranch(flow.integratorDeps, flow.stagingDir, landingMeta(flow, task, true), flow.gate),
  );
}

/**
 * A task's worktree in the agent's repository is done with (the next task's, or removed at the drain's end); with its
 * branch, the branch on the runner's side goes too (a parked task's stays for review).
 */
async function tidyTask(flow: TaskFlow, task: Task, withBranch: boolean): Promise<void> {
  const { worker } = flow;
  worker.sides.finishTask(task.id);
  if (withBranch) await worker.refs.run(() => deleteBranch(worker.git, worker.workspace, taskBranch(task.id)));
}

/** The one path every ending of a task takes. */
async function applyVerdict(flow: TaskFlow, task: Task, verdict: TaskVerdict, started: number): Promise<void> {
  // Reasons are agent text: redacted once here, before they reach a commit
  // message, a task note, attempts.json, progress or the summary.
  const plan = redactDeep(planFor(task.id, verdict), flow.worker.secrets);
  const { book } = flow;
  if (plan.systemic) flow.onSystemicFailure(plan.systemic);
  if (plan.countFailure) {
    const counted = book.failed(task.id, plan.countFailure.reason);
    await (plan.countFailure.bestEffort ? counted.catch(() => undefined) : counted);
  }
  const edit = plan.stagingEdit;
  const stagingCommit = edit
    ? await flow.integrator.run(() =>
        edit.kind === 'park'
          ? parkTask(flow.integratorDeps, flow.stagingDir, task.id, edit.reason, taskBranch(task.id))
          : blockTask(flow.integratorDeps, flow.stagingDir, task.id, edit.reason),
      )
    : undefined;
  const report = plan.report;
  // An ending is said the moment auto/work shows it, before the bookkeeping below: the scheduler may read the board
  // and start a dependent meanwhile, and the progress must show the landing first.
  if ('finish' in report) book.finish(task, report.finish, report.reason, started, report.commit ?? stagingCommit);
  if (plan.attempts === 'settle') await book.settle(task.id);
  else if (plan.attempts !== 'keep')
    await book.retryAfterConflict(task.id, plan.attempts.conflictRetry, plan.attempts.tellAgent);
  if (plan.worktree !== 'keep') await tidyTask(flow, task, plan.worktree === 'remove');
  if (plan.exclude) book.excluded.add(task.id);
  if ('finish' in report) return;
  if ('retrying' in report)
    book.emit({ event: 'task-retrying', taskId: task.id, title: task.title, reason: report.retrying });
  else book.emit({ event: 'recovered', detail: report.recovered });
}

/** Runs one task to its end in this drain. Never throws: an internal error is a failed attempt. */
export async function runTaskFlow(
  flow: TaskFlow,
  task: Task,
  releaseSlot: () => void = () => undefined,
): Promise<void> {
  const started = flow.worker.ports.clock.now();
  const retryReason = flow.book.takeRetryReason(task.id);
  flow.book.emit({
    event: 'task-started',
    taskId: task.id,
    title: task.title,
    ...(retryReason ? { retry: retryReason } : {}),
  });
  try {
    const work = await workOnTask(flow.worker, task, retryReason, flow.book.attemptsOf(task.id)?.failures ?? 0);
    // Without review the agent is done: its slot goes to the next task while this one waits for the integrator.
    if (!flow.review) releaseSlot();
    const verdict = afterAgent({
      outcome: work.outcome,
      failure: work.failure,
      stopped: flow.stop.aborted,
      attempts: flow.book.attemptsOf(task.id),
      maxAttempts: flow.maxAttempts,
    });
    if (verdict.kind !== 'integrate') return await applyVerdict(flow, task, verdict, started);
    // A reviewer (and a fix round) is an agent too: the slot is held until the review ends.
    const withheld = await reviewed(flow, task, work.base).finally(releaseSlot);
    if (withheld) return await applyVerdict(flow, task, withheld, started);
    const integration = await flow.queue.integrate(task);
    await applyVerdict(
      flow,
      task,
      afterIntegration(integration, Boolean(flow.book.attemptsOf(task.id)?.conflictRetried)),
      started,
    );
  } catch (error) {
    releaseSlot();
    await applyVerdict(flow, task, afterInternalError(error), started).catch(() => undefined);
  }
}

/**
 * Finished work an interrupted drain left on its branches: integrated before
 * anything new starts, in batches like any finished tasks (recovery found
 * none of them on auto/work, so none can have landed already).
 */
export async function integrateRecovered(flow: TaskFlow, tasks: readonly Task[]): Promise<void> {
  // A batch's endings (worktree removal, park commits) run while the next batch merges, as live tasks' do.
  const endings: Promise<void>[] = [];
  const waiting: Task[] = [];
  // Reviewed first, unless review approved exactly this head before the drain that found it was killed.
  for (const task of tasks) {
    const started = flow.worker.ports.clock.now();
    const { worker } = flow;
    const fork = flow.review
      ? await mergeBase(worker.git, worker.workspace, flow.worker.startCommit(), taskBranch(task.id))
      : undefined;
    const withheld = flow.review
      ? fork
        ? await reviewed(flow, task, fork, true).catch((error: unknown) => afterInternalError(error))
        : afterReviewEnding({ kind: 'park', reason: 'review: the branch shares no history with auto/work' }, true)
      : undefined;
    if (withheld) endings.push(applyVerdict(flow, task, withheld, started));
    else waiting.push(task);
  }
  while (waiting.length) {
    const ids = formBatch(
      waiting.map((task) => task.id),
      flow.maxBatch,
    );
    const batch = ids.map(
      (id) =>
        waiting.splice(
          waiting.findIndex((task) => task.id === id),
          1,
        )[0]!,
    );
    const started = flow.worker.ports.clock.now();
    const outcomes: ReadonlyMap<TaskId, IntegrationOutcome> =
      batch.length === 1
        ? new Map([[batch[0]!.id, await integrateAlone(flow, batch[0]!)]])
        : await flow.integrator.run(() =>
            integrateBatch(
              flow.integratorDeps,
              flow.stagingDir,
              batch.map((task) => landingMeta(flow, task)),
              flow.gate,
            ),
          );
    for (const task of batch)
      endings.push(applyVerdict(flow, task, afterRecoveredIntegration(task.id, outcomes.get(task.id)!), started));
  }
  await Promise.all(endings);
}
