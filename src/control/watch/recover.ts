// What a watcher repairs when it starts, after a crashed predecessor: a
// stale run lock, runs still marked running (their processes ended, the
// runs marked interrupted, the ledger told their usage is unknown), and the
// jobs left in running/ (requeued, settled as landed, or given up).
import type { RegistryRepo } from '../../types.js';
import { BusyError } from '../../errors.js';
import { acquireLock, clearDeadLock } from '../../lock.js';
import { runLockPath } from '../../paths.js';
import type { HeldLock } from '../../ports.js';
import { DEFAULT_MAX_ATTEMPTS, jobTask, type Job } from '../jobs/index.js';
import { tasksLandedInRun } from '../repo-view/index.js';
import {
  runUnitPattern,
  stopUnitCommand,
  systemdIsRunning,
  describeSweep,
  endRunProcesses,
} from '../dispatch/index.js';
import { latestRuns, writeRun, type RunRecord } from '../runs/index.js';
import { repoIdentities, repoUser } from '../repo-user/index.js';
import { appendLedger, sealRun } from '../ledger/index.js';
import type { WatcherContext } from './deps.js';

/** How many of a repo's runs a restart checks for "still marked running". */
const RECENT_RUNS = 20;

const RECOVERY_EVENTS = {
  requeue: 'job-requeued',
  landed: 'job-landed-before-restart',
  'give-up': 'job-gave-up',
  'drop-duplicate': 'job-duplicate-dropped',
} as const;

/** After a crash: stale run lock, orphaned process groups, runs still marked running, jobs left in running/. */
export async function recoverRepo(context: WatcherContext, repo: RegistryRepo): Promise<void> {
  await recoverRuns(context, repo);
  await recoverJobs(context, repo);
}

async function recoverRuns(context: WatcherContext, repo: RegistryRepo): Promise<void> {
  const { deps, name } = context;
  const lockPath = runLockPath(deps.state, name);
  const cleared = await clearDeadLock(context.lockDeps, lockPath);
  if (cleared.cleared)
    context.log('stale-lock-cleared', {
      lock: 'run',
      holderPid: cleared.holder?.pid,
      holderCommand: cleared.holder?.command,
    });
  let runLock: HeldLock;
  try {
    runLock = await acquireLock(context.lockDeps, lockPath, {
      command: `watch ${name} (recovering)`,
      wait: false,
      what: `repo "${name}"`,
    });
  } catch (error) {
    if (!(error instanceof BusyError)) throw error;
    // A live dispatch owns the repo: its runs and agents are not orphans.
    context.log('recovery-deferred', { reason: error.message });
    return;
  }
  try {
    const orphans = (await latestRuns(deps.fs, deps.state, name, RECENT_RUNS)).filter(
      (run) => run.status === 'running',
    );
    if (orphans.length) await endLeftovers(context, repo, orphans);
    for (const run of orphans) {
      const record: RunRecord = {
        ...run,
        status: 'interrupted',
        outcome: 'interrupted',
        endedAt: context.now(),
        detail: 'the runner died mid-run (watcher restarted); its processes were ended',
      };
      await writeRun(deps.fs, deps.state, record);
      // Its sessions were never reported: the ledger says unknown, not nothing.
      await appendLedger(
        deps.fs,
        deps.state,
        name,
        sealRun({
          repo: name,
          runId: run.id,
          startedAt: run.startedAt,
          endedAt: record.endedAt!,
          summary: undefined,
          sealedAt: record.endedAt!,
        }),
      );
      context.log('run-interrupted', { runId: run.id });
    }
  } finally {
    await runLock.release();
  }
}

async function recoverJobs(context: WatcherContext, repo: RegistryRepo): Promise<void> {
  const { deps, name } = context;
  const runs = await latestRuns(deps.fs, deps.state, name, RECENT_RUNS);
  const landedIn = async (job: Job): Promise<string | undefined> => {
    const taskId = jobTask(job);
    const run = runs.find((candidate) => candidate.jobId === job.id);
    if (!taskId || !run) return undefined;
    const landed = await tasksLandedInRun(deps.process, repo.path, run.id);
    return landed.some((id) => id.toLowerCase() === taskId.toLowerCase()) ? run.id : undefined;
  };
  for (const action of await context.spool.recover(context.now(), deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS, landedIn)) {
    context.log(RECOVERY_EVENTS[action.action], {
      jobId: action.id,
      ...(action.action === 'landed' ? { runId: action.runId, detail: action.detail } : {}),
    });
  }
}

/**
 * Runs died with their runner: their processes are the repo user's. End
 * them all (the run units too, under systemd), never by pids read from
 * records: a record says THAT a run was in flight, not what to kill.
 */
async function endLeftovers(context: WatcherContext, repo: RegistryRepo, orphans: readonly RunRecord[]): Promise<void> {
  const { deps } = context;
  const runs = orphans.map((run) => run.id);
  let users;
  try {
    // The runner, the agent and the gate; a repo not yet given its agent and gate still has its user swept.
    users = await repoIdentities(deps, repo).then(
      (accounts) => [accounts.runner, accounts.agent, accounts.gate],
      async () => [await repoUser(deps, repo)],
    );
  } catch (error) {
    context.log('leftovers-not-ended', { runs, error: (error as Error).message });
    return;
  }
  const units = (await systemdIsRunning(deps.fs)) ? stopUnitCommand(runUnitPattern(context.name)) : undefined;
  const sweep = await endRunProcesses(deps, units, users, deps.killAfterMs);
  context.log('leftovers-ended', {
    runs,
    found: sweep.found,
    killed: sweep.killed,
    survivors: sweep.survivors,
    detail: describeSweep(sweep),
  });
}
