// orchestrate --drain / --task: lock the workspace, prepare auto/work, clean
// up what a killed drain left, drain the board through parallel workers and
// the serialized integrator, publish, and write the drain's summary.
import * as path from 'node:path';
import type { LockPort, Ports, ProcessControl } from '../ports.js';
import type { AgentAdapter, RepoConfig, TaskId, Board, LabelCheck } from '../types.js';
import type { Git } from '../git/git.js';
import {
  acquireRepoLock,
  clearStaleGitLocks,
  recoverTaskBranches,
  ProcessTracker,
  recordedGroups,
  reapGroups,
} from './recovery/index.js';
import { fetchAndResolveBase, prepareStaging, publishedStaging, publishStaging } from '../staging/branch.js';
import { StagingMovedError, StagingTip } from '../staging/tip.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { Sides } from './sides.js';
import { localLauncher, type Launcher } from '../launch/index.js';
import { sameUserLayout, type IdentityLayout } from '../identities.js';
import { DEFAULT_BUNDLE_MAX_BYTES } from '../handoff/heads.js';
import type { GitIdentity } from '../git/git.js';
import { readBoard } from '../board/read.js';
import { assessReadiness, BLOCKED_STATUS, describeReason } from '../board/readiness.js';
import { blockedReason, isParked, parkedReason } from '../board/parking.js';
import { sameStatus } from '../board/status.js';
import { landingOf } from '../staging/lifecycle.js';
import { drainLoop } from './schedule.js';
import { boardReader, ensureBlockedOnStaging } from './staging-board/index.js';
import { Mutex } from './mutex.js';
import type { WorkerContext } from './task-worker.js';
import { DrainBook } from './book.js';
import { integrateRecovered, landingMeta, runTaskFlow, type TaskFlow } from './task-flow.js';
import {
  integrateBranch,
  type IntegratorDeps,
  integrateBatch,
  IntegrationQueue,
  committedConfig,
  gateSpecFrom,
} from './integrate/index.js';
import { processRecordsDir, workspaceStateDir } from '../paths.js';
import { recordDrain } from './history.js';
import type { DrainEvent, DrainEventBody, DrainSummary, Emit } from './types.js';
import { drainOutcome, shouldPublish, type DrainFacts } from './verdict/index.js';
import { SessionGuard } from './session-guard.js';
import { NO_SPEND_POLICY, type SpendPolicy } from '../spend/policy.js';
import { utcDay } from '../spend/verdict.js';
import { readRememberedReset, rememberReset } from './rate-limit-memory.js';
import { redactDeep, redactSecrets } from '../agent/secrets.js';
import { sameTaskId } from '../board/task-id.js';
import { labelCheckFor } from '../repo/escalation.js';
import { effectiveReview, type RegistryReview } from '../repo/review-config.js';
import { findReviewer, ReviewRecords } from './review/index.js';
import type { RemoteAttempts } from './remote.js';

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
  /** Ends what a killed drain left running: the agents it recorded, the gits it started (drain/recovery). */
  readonly control: Pick<ProcessControl, 'signalGroup' | 'signalProcess' | 'self' | 'processesInRepository'>;
  /** Takes the workspace lock. */
  readonly locks: LockPort;
  /** Budgets and what the ledger says was spent (root passes it); none: no caps, default waits. */
  readonly spend?: SpendPolicy;
  /** How agent and gate commands start: root's launcher; none: as this user (one user plays every part). */
  readonly launcher?: Launcher;
  /** The agent's and gate's places; none: one user's, inside the workspace's state dir. */
  readonly layout?: IdentityLayout;
  /** The largest task bundle accepted (default DEFAULT_BUNDLE_MAX_BYTES). */
  readonly bundleMaxBytes?: number;
  /** Who the agent's commits are by (the repo's author). */
  readonly author?: GitIdentity;
  /** The registry's word on review: required turns it on whatever the repo's config says (default optional). */
  readonly review?: RegistryReview;
  /**
   * The run's provider broker, http://127.0.0.1:PORT: every model session (implement, fix, review) is pointed at it
   * in place of a login; root's launcher gives each its capability. None: the agents use their own logins.
   */
  readonly brokerUrl?: string;
  /** Where task attempts run when not on this host (a repo with backend = "kubernetes": a Job each). */
  readonly remote?: RemoteAttempts;
}

/** The identities' places, made where one user plays every part (a host's are provision's). */
async function identityLayout(fs: Ports['fs'], input: OrchestrateInput, wsState: string): Promise<IdentityLayout> {
  if (input.layout) return input.layout;
  const layout = sameUserLayout(wsState);
  for (const dir of [layout.agentHome, layout.gateHome, ...Object.values(layout.handoff)]) await fs.mkdirp(dir, 0o700);
  return layout;
}

/** Review as auto/work's committed config asks for it (the registry may require it): who reviews, and its records. */
async function reviewSetup(
  ports: Ports,
  input: OrchestrateInput,
  trusted: RepoConfig,
  wsState: string,
  emit: Emit,
): Promise<TaskFlow['review']> {
  const review = effectiveReview(trusted.review, input.review ?? 'optional');
  if (!review.enabled) return undefined;
  const { reviewer, fallback } = await findReviewer(ports.process, { ...input.config, review }, input.env.PATH ?? '');
  const records = new ReviewRecords(ports.fs, wsState);
  await records.prepare(input.runId);
  emit({
    event: 'review-setup',
    detail: `${reviewer.assistant}${reviewer.model ? `/${reviewer.model}` : ''} reviews ${input.config.assistant}'s work, at most ${review.maxRounds} fix round(s)${fallback ? ` (${fallback})` : ''}`,
  });
  return { review, reviewer, records };
}

export async function orchestrate(ports: Ports, git: Git, input: OrchestrateInput): Promise<DrainSummary> {
  const { fs, clock, process } = ports;
  const wsState = workspaceStateDir(input.stateDir, input.workspace);
  await fs.mkdirp(processRecordsDir(wsState), 0o700);
  const { lock, gitCommonDir } = await acquireRepoLock(
    { locks: input.locks, process, clock },
    git,
    input.workspace,
    `orchestrate ${input.runId}`,
  );
  const startedAt = clock.now();
  // Progress carries titles and reasons: every event passes the one redaction.
  const emit: Emit = (event: DrainEventBody) =>
    input.onEvent(
      redactDeep(
        { time: new Date(clock.now()).toISOString(), runId: input.runId, ...event } as DrainEvent,
        input.secrets,
      ),
    );
  try {
    await reapOrphanedAgents(ports, input, wsState, emit);
    // After the orphans: a git they ran is gone, so what it locked is stale.
    const gitLocks = { fs, process, clock, control: input.control };
    for (const note of await clearStaleGitLocks(gitLocks, input.workspace, gitCommonDir))
      emit({ event: 'recovered', detail: note });
  } catch (error) {
    // Busy (a live process holds a git lock) or failed before the drain began: nothing to record.
    await lock.release();
    throw error;
  }
  let outcome: DrainSummary['outcome'] = 'drained';
  let failure: string | undefined;
  let note: string | undefined;
  let staging = { base: '', head: '' };
  let pushed = false;
  let summary: DrainSummary | undefined;
  let book: DrainBook | undefined;
  const policy = input.spend ?? { ...NO_SPEND_POLICY, day: utcDay(clock.now()) };
  const sessions = new SessionGuard(clock, policy, input.adapter.name, emit, input.stop, (until) =>
    rememberReset(fs, wsState, { assistant: input.adapter.name, until }),
  );
  sessions.carryOver(await readRememberedReset(fs, wsState));
  try {
    const refs = await fetchAndResolveBase(git, input.workspace, input.config.baseBranch, true);
    const remoteBefore = await publishedStaging(git, input.workspace, refs);
    const prepared = await prepareStaging(git, fs, input.workspace, refs, input.config.workBranchMode, input.force);
    for (const note of prepared.recovered) emit({ event: 'recovered', detail: note });
    emit({
      event: 'staging-ready',
      base: prepared.baseHead,
      head: prepared.head,
      created: prepared.created,
      mergedBase: prepared.mergedBase,
      reset: prepared.reset,
    });
    const stagingDir = prepared.stagingDir;
    const withBlocked = await ensureBlockedOnStaging(fs, git, stagingDir);
    if (withBlocked)
      emit({
        event: 'recovered',
        detail: `added the Blocked status to the board's config on ${STAGING_BRANCH} (before the finished status), so agents can set it`,
      });

    // auto/work as this drain starts it, before any task merges: the gate is read from it, and it is the first tip.
    const startTip = withBlocked ?? prepared.head;
    const trusted = await committedConfig(git, stagingDir, startTip);
    book = await DrainBook.open(fs, clock, wsState, emit);
    const drainBook = book;
    const refsMutex = new Mutex();
    const agents = new ProcessTracker(ports, wsState, input.runId);
    let systemicFailure: string | undefined;
    const tip = new StagingTip(git, stagingDir, startTip);
    const sides = new Sides({
      git,
      fs,
      launcher: input.launcher ?? localLauncher(process),
      layout: await identityLayout(fs, input, wsState),
      workspace: input.workspace,
      scratch: wsState,
      env: input.env,
      author: input.author,
      bundleMaxBytes: input.bundleMaxBytes ?? DEFAULT_BUNDLE_MAX_BYTES,
      refs: refsMutex,
    });
    await sides.clearLeftovers();
    const worker: WorkerContext = {
      ports,
      git,
      workspace: input.workspace,
      stateDir: input.stateDir,
      config: input.config,
      adapter: input.adapter,
      binary: input.binary,
      env: input.env,
      secrets: input.secrets,
      runId: input.runId,
      refs: refsMutex,
      sides,
      startCommit: () => tip.current,
      onProcess: (task, event, kind) => agents.update(task.id, event, kind),
      sessions,
      ...(input.brokerUrl !== undefined ? { brokerUrl: input.brokerUrl } : {}),
      ...(input.remote ? { remote: input.remote } : {}),
    };
    const integratorDeps: IntegratorDeps = {
      process,
      fs,
      clock,
      git,
      tip,
      onGateProcess: (taskId, event) => agents.update(taskId, event, 'gate'),
      onGateRun: (tasks, result) => drainBook.gateRan({ tasks, ok: result.ok, durationMs: result.durationMs }),
      gateSide: { checkout: (commit) => sides.prepareCandidate(commit), process: sides.processOf('gate') },
    };
    const integrator = new Mutex();
    const gate = gateSpecFrom(trusted, input.env);
    const review = await reviewSetup(ports, input, trusted, wsState, emit);
    const approvals = new Map<TaskId, string>();
    const flow: TaskFlow = {
      worker,
      integratorDeps,
      integrator,
      queue: integrationQueue(
        { worker, gate, approvals },
        integratorDeps,
        integrator,
        stagingDir,
        input.config.maxBatch,
      ),
      stagingDir,
      gate,
      maxAttempts: input.config.maxAttempts,
      maxBatch: input.config.maxBatch,
      book,
      stop: input.stop,
      onSystemicFailure: (reason) => {
        systemicFailure ??= reason;
      },
      ...(review ? { review } : {}),
      approvals,
    };

    // What dead runs left where attempts run elsewhere (a cluster's Jobs and Secrets), before anything new starts.
    for (const note of (await input.remote?.prepare()) ?? []) emit({ event: 'recovered', detail: note });
    const pending = await recoverTaskBranches({
      ports,
      git,
      workspace: input.workspace,
      stagingDir,
      refs: refsMutex,
      stagingReset: prepared.reset,
    });
    for (const note of pending.notes) emit({ event: 'recovered', detail: note });
    await integrateRecovered(flow, pending.toIntegrate);

    let stopTimer: { cancel(): void } | undefined;
    const onStop = () => {
      emit({
        event: 'stopping',
        detail: `stop requested; waiting up to ${Math.round(input.graceMs / 1000)}s for running agents`,
      });
      stopTimer = clock.setTimer(input.graceMs, () => {
        agents.signalAll('SIGTERM');
        const remoteStop = (how: 'stop' | 'kill') =>
          void input.remote
            ?.stopAll(how)
            .catch((error: unknown) =>
              emit({ event: 'stopping', detail: `could not ${how} a running attempt: ${String(error)}` }),
            );
        remoteStop('stop');
        clock.setTimer(5000, () => {
          agents.signalAll('SIGKILL');
          remoteStop('kill');
        });
      });
    };
    if (input.stop.aborted) onStop();
    else input.stop.addEventListener('abort', onStop, { once: true });

    await drainLoop(
      {
        readBoard: boardReader(
          () => readBoard(fs, stagingDir),
          () => integrator.ended,
        ),
        runTask: (task, releaseSlot) => runTaskFlow(flow, task, releaseSlot),
        stopping: () =>
          input.stop.aborted ||
          systemicFailure !== undefined ||
          tip.movedBy !== undefined ||
          sessions.budgetStop !== undefined,
        excluded: () => drainBook.excluded,
      },
      input.config.maxParallel,
      input.only,
      labelCheckFor(input.config.assistant),
    );
    stopTimer?.cancel();
    input.stop.removeEventListener('abort', onStop);
    await sides.release();

    const same = (id: string) => sameTaskId(id, input.only!);
    const ran = input.only !== undefined && [...book.results.keys()].some(same);
    const only =
      input.only === undefined || ran
        ? input.only === undefined
          ? undefined
          : { id: input.only, ran, onBoard: true }
        : await onlyOnStaging(git, fs, stagingDir, input.only, labelCheckFor(input.config.assistant));

    // Published only while auto/work is still the commit the runner wrote last, and exactly that commit.
    const moved = await tip.verify().then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof StagingMovedError) return error;
        throw error;
      },
    );
    if (moved)
      emit({ event: 'staging-moved', expected: moved.expected, found: moved.found ?? null, detail: moved.message });
    const head = tip.current;
    staging = { base: prepared.baseHead, head };
    let publish: DrainFacts['publish'];
    if (!moved && shouldPublish(input.push, head, remoteBefore)) {
      const result = await publishStaging(git, input.workspace, refs, remoteBefore, head);
      pushed = result.pushed;
      publish = { pushed: result.pushed, reason: result.reason, hasOrigin: refs.hasOrigin };
      emit({
        event: pushed ? 'published' : 'publish-skipped',
        detail: result.reason ?? `${STAGING_BRANCH} at ${head.slice(0, 12)}`,
      });
    }
    const verdict = drainOutcome({
      ...(only ? { only } : {}),
      systemicFailure,
      ...(moved ? { stagingMoved: moved.message } : {}),
      stopped: input.stop.aborted,
      tasksEnded: book.results.size,
      ...(publish ? { publish } : {}),
    });
    outcome = verdict.outcome;
    failure = verdict.failure;
    note = verdict.note;
  } catch (error) {
    outcome = 'failed';
    failure = error instanceof Error ? error.message : String(error);
    // A git error can quote a remote URL with its token: the message reaches stderr too.
    if (error instanceof Error) error.message = redactSecrets(error.message, input.secrets);
    throw error;
  } finally {
    summary = redactDeep<DrainSummary>(
      {
        runId: input.runId,
        outcome,
        ...(failure ? { failure } : {}),
        ...(note ? { note } : {}),
        tasks: [...(book?.results.values() ?? [])],
        sessions: sessions.reports,
        ...(sessions.budgetStop ? { budgetStop: sessions.budgetStop } : {}),
        ...(book ? { gateRuns: book.gates.length, gates: book.gates } : {}),
        staging,
        pushed,
        startedAt: new Date(startedAt).toISOString(),
        endedAt: new Date(clock.now()).toISOString(),
      },
      input.secrets,
    );
    await recordDrain(fs, wsState, summary).catch(() => undefined);
    await lock.release();
    emit({
      event: 'drain-finished',
      outcome,
      ...(summary.failure ? { reason: summary.failure } : summary.note ? { reason: summary.note } : {}),
    });
  }
  return summary;
}

/** Finished tasks wait here; the integrator takes up to maxBatch of them at a time. */
function integrationQueue(
  flow: Pick<TaskFlow, 'worker' | 'gate' | 'approvals'>,
  deps: IntegratorDeps,
  integrator: Mutex,
  stagingDir: string,
  maxBatch: number,
): IntegrationQueue {
  return new IntegrationQueue(integrator, maxBatch, {
    one: (task) => integrateBranch(deps, stagingDir, landingMeta(flow, task), flow.gate),
    batch: (tasks) =>
      integrateBatch(
        deps,
        stagingDir,
        tasks.map((task) => landingMeta(flow, task)),
        flow.gate,
      ),
  });
}

/** Ends agents a killed drain left running: they would keep writing into worktrees this drain removes. */
async function reapOrphanedAgents(ports: Ports, input: OrchestrateInput, wsState: string, emit: Emit): Promise<void> {
  const { fs, clock, process } = ports;
  const orphans = await recordedGroups(fs, wsState);
  const reaped = orphans.length ? await reapGroups({ process, control: input.control, clock }, orphans, 5000) : [];
  for (const entry of reaped) {
    emit({
      event: 'recovered',
      detail: `ended ${entry.label} (pid ${entry.pid}) left running by an interrupted drain`,
    });
  }
  const dir = processRecordsDir(wsState);
  // Records, and temp files of record writes a crash interrupted.
  for (const name of await fs.list(dir)) await fs.remove(path.join(dir, name));
}

/**
 * Pure: what the board says of a --task that did not run: on it and how it stands (Done, parked, Blocked, not ready
 * and why; nothing when it is ready and a stop kept it), unreadable, or absent.
 */
function onlyFacts(id: TaskId, board: Board, labels: LabelCheck): NonNullable<DrainFacts['only']> {
  const task = board.tasks.find((candidate) => sameTaskId(candidate.id, id));
  if (!task) {
    if ((board.completed ?? []).some((done) => sameTaskId(done, id)))
      return { id, ran: false, onBoard: true, standing: { kind: 'done' } };
    const broken = board.unreadable.find((entry) => entry.id !== undefined && sameTaskId(entry.id, id));
    return { id, ran: false, onBoard: false, ...(broken ? { unreadable: `${broken.file}: ${broken.reason}` } : {}) };
  }
  // Said with the id as the board spells it (task-1 asked, TASK-1 said).
  const on = { id: task.id, ran: false, onBoard: true } as const;
  const entry = assessReadiness(board, labels).notReady.find((candidate) => sameTaskId(candidate.id, id));
  if (!entry) return on;
  if (entry.reasons.some((reason) => reason.kind === 'done')) return { ...on, standing: { kind: 'done' } };
  if (isParked(task)) return { ...on, standing: { kind: 'parked', reason: parkedReason(task) } };
  if (sameStatus(task.status, BLOCKED_STATUS))
    return { ...on, standing: { kind: 'blocked', reason: blockedReason(task) } };
  return { ...on, standing: { kind: 'not-ready', reasons: entry.reasons.map(describeReason) } };
}

/**
 * A --task that did not run, from auto/work's board; when it is Done there, the landing that brought it (the
 * integrator's merge on auto/work's first-parent line, with its run), so a job for it is met, not failed.
 */
async function onlyOnStaging(
  git: Git,
  fs: Ports['fs'],
  stagingDir: string,
  id: TaskId,
  labels: LabelCheck,
): Promise<NonNullable<DrainFacts['only']>> {
  const board = await readBoard(fs, stagingDir);
  const facts = onlyFacts(id, board, labels);
  if (facts.standing?.kind !== 'done') return facts;
  const landing = await landingOf(git, stagingDir, facts.id);
  return landing ? { ...facts, standing: { kind: 'landed', commit: landing.commit, runId: landing.runId } } : facts;
}
