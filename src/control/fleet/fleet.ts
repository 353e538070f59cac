// agent-runner fleet: every registered repo at a glance. read (gatherFleet)
// -> decide (fleetEntry, pure) -> render (JSON for the dashboard, text for
// people). The JSON shape is documented in docs/operations.md ("fleet --json").
import { printableLine } from '../../printable.js';
import { lookupUser } from '../repo-user/index.js';
import type { FsPort, LockPort, ProcessPort, ScheduleCheck } from '../../ports.js';
import type { ConfigProblem, RegistryRepo } from '../../types.js';
import { existingRefs, revListLeftRightCount } from '../../git/outsider.js';
import { STAGING_BRANCH, STAGING_REF } from '../../staging/names.js';
import { parseRegistry } from '../registry/index.js';
import { watchLockPath } from '../../paths.js';
import { isSameProcess } from '../../process-identity.js';
import { Spool } from '../jobs/index.js';
import { latestRuns, mergeRunHistory, startedBy, type RunRecord, type RunStartedBy } from '../runs/index.js';
import { runningAgentTasks } from './agents.js';
import { readWatchStatus, type WatchStatus, readPause, type PauseFlag } from '../watch/index.js';
import {
  BoardSnapshot,
  gitViewMatches,
  readDrainHistory,
  gitViewRefs,
  stagingBetween,
  validGitView,
  type BoardSummary,
  type RefCommits,
  type WorkspaceFiles,
} from '../repo-view/index.js';
import { pullRequestCell, readPullRequestRecord, type PullRequestRecord } from '../pull-request/index.js';
import { fleetSpend, type FleetSpend } from './spend.js';
import { readLedger, type LedgerRecord } from '../ledger/index.js';
import { utcDay } from '../../spend/verdict.js';
import type { DrainSummary } from '../../drain/types.js';
import { mapBounded } from './bounded.js';
import { FleetCache } from './cache.js';
import { readRefOids } from '../../git/ref-files.js';

export interface FleetRepo {
  readonly name: string;
  readonly enabled: boolean;
  /** The operator paused the watcher (control/watch/pause.ts); null when not paused. */
  readonly paused: { readonly since: string; readonly by: string } | null;
  readonly user: string;
  readonly path: string;
  readonly baseBranch: string;
  readonly schedule: string;
  readonly maxParallel: number;
  readonly watcher: {
    /** 'absent': no watcher has ever written a status; 'dead': the status says running but its process is gone. */
    readonly state: WatchStatus['state'] | 'absent' | 'dead';
    readonly pid: number | null;
    readonly heartbeatAgeSec: number | null;
    readonly lastTick: string | null;
    readonly lastError: { readonly at: string; readonly message: string } | null;
  };
  readonly run: {
    readonly id: string;
    /** How the run started, in the words `runs` uses (runs/history.ts startedBy). */
    readonly trigger: RunStartedBy;
    readonly jobId: string | null;
    readonly startedAt: string;
    readonly elapsedSec: number;
    readonly runningTasks: readonly string[];
  } | null;
  readonly queue: { readonly queued: number; readonly running: number };
  readonly staging: { readonly exists: boolean; readonly ahead: number; readonly behind: number } | null;
  readonly board: {
    readonly ready: number;
    readonly parked: number;
    readonly unreadable: number;
    readonly total: number;
  } | null;
  /** The newest finished run, with the figures `runs` gives the same run (one derivation: mergeRunHistory). */
  readonly lastRun: {
    readonly id: string;
    readonly trigger: RunStartedBy;
    /** What its agent sessions cost, as `runs` says it ("$0.42", "unknown"); null when not known. */
    readonly cost: string | null;
    readonly tokens: number | null;
    readonly outcome: string;
    readonly exitCode: number | null;
    readonly endedAt: string | null;
    readonly landed: number;
    readonly parked: number;
    readonly failed: number;
  } | null;
  /** Today's spend (UTC), the budgets and what holds new runs (spend.ts); null when the ledger could not be read. */
  readonly spend?: FleetSpend | null;
  /** What could not be read for this repo, in words. */
  readonly errors: readonly string[];
  /** With promote = "pr": the staging pull request as the watcher last saw it. */
  readonly pullRequest?: PullRequestRecord;
  /** The registry entry has problems (listed in errors): nothing else was read for it, and no watcher runs it. */
  readonly invalid?: true;
}

export interface Fleet {
  readonly generatedAt: string;
  readonly registry: string;
  readonly problems: readonly ConfigProblem[];
  readonly repos: readonly FleetRepo[];
}

export interface FleetInputs {
  readonly repo: RegistryRepo;
  readonly now: number;
  readonly status: WatchStatus | undefined;
  readonly paused?: PauseFlag | undefined;
  /** Whether the watch lock is held by a live process. */
  readonly watcherAlive: boolean;
  readonly runs: readonly RunRecord[];
  /** The newest drain run by hand in the checkout (`orchestrate`, no root record), as `runs` lists it. */
  readonly drains?: readonly DrainSummary[];
  /** Root's ledger records that price the last run, as `runs` prices it. */
  readonly ledger?: readonly LedgerRecord[];
  readonly runningTasks: readonly string[];
  readonly queued: number;
  readonly runningJobs: number;
  readonly staging: FleetRepo['staging'];
  readonly board: BoardSummary | undefined;
  readonly spend?: FleetSpend | undefined;
  readonly errors: readonly string[];
  readonly pullRequest?: PullRequestRecord | undefined;
}

const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));

/** Pure: the newest finished run, by the derivation `runs` uses (so both say the same of it). */
function lastRunOf(input: Pick<FleetInputs, 'runs' | 'drains' | 'ledger'>) {
  const finished = input.runs.filter((run) => run.status !== 'running');
  return mergeRunHistory(finished, input.drains ?? [], 1, input.ledger ?? []);
}

/** Pure: one repo's fleet entry from what was read. */
export function fleetEntry(input: FleetInputs): FleetRepo {
  const { repo, status, now } = input;
  const current = input.runs.find((run) => run.status === 'running');
  const [last] = lastRunOf(input);
  const watcherState: FleetRepo['watcher']['state'] = !status
    ? 'absent'
    : status.state !== 'stopped' && !input.watcherAlive
      ? 'dead'
      : status.state;
  return {
    name: repo.name,
    enabled: repo.enabled,
    paused: input.paused ?? null,
    user: repo.user,
    path: repo.path,
    baseBranch: repo.baseBranch,
    schedule: repo.schedule,
    maxParallel: repo.maxParallel,
    watcher: {
      state: watcherState,
      pid: status?.pid ?? null,
      heartbeatAgeSec: status ? seconds(now - Date.parse(status.heartbeat)) : null,
      lastTick: status?.lastTick ?? null,
      lastError: status?.lastError ?? null,
    },
    run: current
      ? {
          id: current.id,
          trigger: startedBy(current.trigger),
          jobId: current.jobId ?? null,
          startedAt: current.startedAt,
          elapsedSec: seconds(now - Date.parse(current.startedAt)),
          runningTasks: input.runningTasks,
        }
      : null,
    queue: { queued: input.queued, running: input.runningJobs },
    staging: input.staging,
    board: input.board
      ? {
          ready: input.board.ready.length,
          parked: input.board.parked,
          unreadable: input.board.unreadable,
          total: input.board.total,
        }
      : null,
    lastRun: last
      ? {
          id: last.id,
          trigger: last.trigger,
          cost: last.cost,
          tokens: last.tokens,
          outcome: last.outcome,
          exitCode: last.exitCode,
          endedAt: last.endedAt,
          landed: last.counts.landed,
          parked: last.counts.parked,
          failed: last.counts.failed,
        }
      : null,
    spend: input.spend ?? null,
    errors: input.errors,
    ...(input.pullRequest ? { pullRequest: input.pullRequest } : {}),
  };
}

/** Pure: the entry of a repo whose [repos.NAME] table has problems: shown with them, not hidden. */
export function invalidEntry(name: string, problems: readonly ConfigProblem[]): FleetRepo {
  const own = problems.filter((p) => p.key === `repos.${name}` || p.key.startsWith(`repos.${name}.`));
  return {
    name,
    enabled: false,
    user: '',
    path: '',
    baseBranch: '',
    schedule: '',
    maxParallel: 0,
    watcher: { state: 'absent', pid: null, heartbeatAgeSec: null, lastTick: null, lastError: null },
    run: null,
    queue: { queued: 0, running: 0 },
    staging: null,
    board: null,
    lastRun: null,
    paused: null,
    spend: null,
    errors: own.map((p) => `registry: ${p.file}: ${p.key}: ${p.problem}; ${p.fix}`),
    invalid: true,
  };
}

function age(sec: number | null): string {
  if (sec === null) return '-';
  if (sec < 120) return `${sec}s`;
  if (sec < 7200) return `${Math.round(sec / 60)}m`;
  return `${Math.round(sec / 3600)}h`;
}

/** Pure: the human table. */
export function renderFleetHuman(fleet: Fleet): string {
  const header = ['REPO', 'ON', 'WATCHER', 'BEAT', 'RUN', 'QUEUE', 'STAGING', 'READY', 'PARKED', 'LAST RUN', 'TODAY'];
  const rows = fleet.repos.map((repo) => [
    repo.name,
    repo.invalid ? 'INVALID' : repo.paused ? 'paused' : repo.enabled ? 'yes' : 'no',
    repo.watcher.state,
    age(repo.watcher.heartbeatAgeSec),
    repo.run ? `${age(repo.run.elapsedSec)} ${printableLine(repo.run.runningTasks.join(',')) || '-'}` : '-',
    repo.queue.running ? `${repo.queue.queued}+${repo.queue.running}` : String(repo.queue.queued),
    `${repo.staging ? (repo.staging.exists ? `+${repo.staging.ahead}/-${repo.staging.behind}` : 'none') : '?'}${repo.pullRequest ? ` ${printableLine(pullRequestCell(repo.pullRequest))}` : ''}`.trimEnd(),
    repo.board ? String(repo.board.ready) : '?',
    repo.board ? String(repo.board.parked) : '?',
    repo.lastRun
      ? `${printableLine(repo.lastRun.outcome)}${repo.lastRun.landed ? ` ${repo.lastRun.landed} landed` : ''}`
      : '-',
    repo.spend ? repo.spend.today.text : '?',
  ]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const repo of fleet.repos) {
    if (repo.spend?.hold) out.push(`${repo.name}: ${printableLine(repo.spend.hold)}`);
    for (const error of repo.errors) out.push(`${repo.name}: ${printableLine(error)}`);
    if (repo.watcher.lastError)
      out.push(
        `${repo.name}: last skipped ${printableLine(repo.watcher.lastError.at)}: ${printableLine(repo.watcher.lastError.message)}`,
      );
  }
  // A repo's own problems are listed under it; the rest of the registry's here.
  const shown = new Set(fleet.repos.filter((repo) => repo.invalid).map((repo) => repo.name));
  for (const problem of fleet.problems) {
    if (!shown.has(problem.key.split('.')[1] ?? '') || !problem.key.startsWith('repos.'))
      out.push(printableLine(`registry: ${problem.file}: ${problem.key}: ${problem.problem}; ${problem.fix}`));
  }
  if (!fleet.repos.length) out.push(`no repos registered in ${fleet.registry}`);
  return `${out.join('\n')}\n`;
}

export interface FleetDeps {
  readonly fs: FsPort;
  readonly process: ProcessPort;
  readonly locks: LockPort;
  readonly scheduler: ScheduleCheck;
  /** Board snapshots kept between gathers (the dashboard's refresh), so an unchanged board is not read again. */
  readonly snapshots?: Map<string, BoardSnapshot>;
  /** Where a repo's own records are (the drains run by hand); absent: only root's run records are listed. */
  readonly records?: (repo: RegistryRepo, status: WatchStatus | undefined) => Promise<WorkspaceFiles>;
}

function snapshotFor(deps: FleetDeps, repo: RegistryRepo): BoardSnapshot {
  const key = `${repo.name}\0${repo.path}\0${repo.baseBranch}`;
  let snapshot = deps.snapshots?.get(key);
  if (!snapshot) {
    snapshot = new BoardSnapshot(deps.process, repo.path, repo.baseBranch);
    deps.snapshots?.set(key, snapshot);
  }
  return snapshot;
}

async function stagingCounts(process: ProcessPort, repo: RegistryRepo): Promise<FleetRepo['staging']> {
  const refs = await process.run(
    existingRefs(repo.path, [STAGING_REF, `refs/remotes/origin/${repo.baseBranch}`, `refs/heads/${repo.baseBranch}`]),
  );
  if (refs.exitCode !== 0) throw new Error(`cannot read refs: ${refs.stderr.trim()}`);
  const names = refs.stdout.split('\n').filter(Boolean);
  if (!names.includes(STAGING_REF)) return { exists: false, ahead: 0, behind: 0 };
  const base = names.includes(`refs/remotes/origin/${repo.baseBranch}`)
    ? `refs/remotes/origin/${repo.baseBranch}`
    : `refs/heads/${repo.baseBranch}`;
  const counts = await process.run(revListLeftRightCount(repo.path, base, STAGING_REF));
  if (counts.exitCode !== 0)
    throw new Error(`cannot compare ${STAGING_BRANCH} with ${repo.baseBranch}: ${counts.stderr.trim()}`);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number);
  return { exists: true, ahead: ahead ?? 0, behind: behind ?? 0 };
}

/**
 * The board's counts and staging against the base, without a git process when
 * the repo's ref files say the three commits are those a view was read at:
 * fleet's own cache first, then the view the repo's watcher wrote in
 * watch.json on its last tick. Else read from git objects; either way kept
 * in the cache for the next time.
 */
async function gitView(
  deps: FleetDeps,
  cache: FleetCache,
  repo: RegistryRepo,
  status: WatchStatus | undefined,
  attempt: <T>(what: string, read: () => Promise<T>) => Promise<T | undefined>,
): Promise<{ board: BoardSummary | undefined; staging: FleetRepo['staging'] }> {
  const known = await readRefOids(deps.fs, repo.path, '.git', gitViewRefs(repo.baseBranch));
  const commits: RefCommits | undefined = known && [known[0] ?? null, known[1] ?? null, known[2] ?? null];
  const hit = commits && cache.lookup(repo.name, repo.path, repo.baseBranch, commits);
  if (hit) return { board: hit.board, staging: hit.staging };
  const watched = commits && validGitView(status?.view);
  if (commits && gitViewMatches(watched, repo.path, repo.baseBranch, commits)) {
    cache.store(repo.name, watched);
    return { board: watched.board, staging: watched.staging };
  }
  const snapshot = snapshotFor(deps, repo);
  const board = await attempt('board', () => snapshot.summary());
  const seen = snapshot.commits;
  const read: RefCommits | undefined = seen && [seen.staging ?? null, seen.originBase ?? null, seen.localBase ?? null];
  const staging =
    (await attempt('staging', () =>
      board && read
        ? stagingBetween(deps.process, repo.path, repo.baseBranch, read)
        : stagingCounts(deps.process, repo),
    )) ?? null;
  if (board && read && staging)
    cache.store(repo.name, { path: repo.path, baseBranch: repo.baseBranch, commits: read, board, staging });
  return { board, staging };
}

async function gatherRepo(
  deps: FleetDeps,
  cache: FleetCache,
  state: string,
  repo: RegistryRepo,
  now: number,
): Promise<FleetRepo> {
  const errors: string[] = [];
  const attempt = async <T>(what: string, read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      errors.push(`${what}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const status = await attempt('watch status', () => readWatchStatus(deps.fs, state, repo.name));
  const paused = await attempt('pause flag', () => readPause(deps.fs, state, repo.name));
  const lock = await attempt('watch lock', () => deps.locks.inspect(watchLockPath(state, repo.name)));
  let watcherAlive = false;
  if (lock?.locked && lock.holder)
    watcherAlive = isSameProcess(lock.holder, await deps.process.startTimeOf(lock.holder.pid));
  const runs = (await attempt('run records', () => latestRuns(deps.fs, state, repo.name, 10))) ?? [];
  const spool = new Spool(deps.fs, state, repo.name);
  const queued = (await attempt('queue', () => spool.ids('queue')))?.length ?? 0;
  const runningJobs = (await attempt('queue', () => spool.ids('running')))?.length ?? 0;
  // Only a run in progress has running tasks: an idle refresh spawns no getent and reads no user file.
  const account = runs.some((run) => run.status === 'running')
    ? await attempt('user', () => lookupUser(deps.process, repo.user))
    : undefined;
  const runningTasks = account
    ? ((await attempt('agents', () => runningAgentTasks(deps.fs, account.home, repo.path))) ?? [])
    : [];
  const { board, staging } = await gitView(deps, cache, repo, status, attempt);
  const pullRequest =
    repo.promote?.mode === 'pr'
      ? await attempt('pull request', () => readPullRequestRecord(deps.fs, state, repo.name))
      : undefined;
  const records = deps.records;
  const drains = records
    ? ((await attempt('drain history', async () => readDrainHistory(deps.fs, await records(repo, status), 1))) ?? [])
    : [];
  const today = await attempt('ledger', () => readLedger(deps.fs, state, repo.name, utcDay(now)));
  const ledger = await ledgerPricing(deps, state, repo, { runs, drains }, today, now);
  return fleetEntry({
    pullRequest,
    spend: today && fleetSpend(repo, today, now, status),
    repo,
    now,
    status,
    paused,
    watcherAlive,
    runs,
    drains,
    ledger,
    runningTasks,
    queued,
    runningJobs,
    staging,
    board,
    errors,
  });
}

/**
 * The ledger records that price the last run: today's (read for the spend anyway), or from the day it started when
 * that was before today and its record carries no figures of its own.
 */
async function ledgerPricing(
  deps: FleetDeps,
  state: string,
  repo: RegistryRepo,
  history: Pick<FleetInputs, 'runs' | 'drains'>,
  today: readonly LedgerRecord[] | undefined,
  now: number,
): Promise<readonly LedgerRecord[]> {
  const [last] = lastRunOf(history);
  if (!last || last.cost !== null) return today ?? [];
  const day = utcDay(Date.parse(last.startedAt));
  if (today && day >= utcDay(now)) return today;
  return (await readLedger(deps.fs, state, repo.name, day).catch(() => undefined)) ?? today ?? [];
}

/**
 * Repos read at once. Each read is a few short git processes and file reads;
 * more in flight only adds contention (and, by the thousand, runs out of file
 * descriptors).
 */
const FLEET_CONCURRENCY = 16;

/** Reads the registry (reporting its problems instead of failing) and every repo's state. */
export async function gatherFleet(deps: FleetDeps, registryFile: string, state: string, now: number): Promise<Fleet> {
  const text = await deps.fs.readTextIfExists(registryFile);
  const { registry, problems, declared } =
    text === undefined
      ? {
          registry: { repos: [] },
          declared: [],
          problems: [
            {
              file: registryFile,
              key: '(file)',
              problem: 'the registry does not exist',
              fix: 'create it (see control/registry.example.toml) or set AGENT_RUNNER_CONFIG',
            },
          ],
        }
      : parseRegistry(text, registryFile, deps.scheduler);
  const cache = await FleetCache.load(deps.fs, state);
  const gathered = new Map(
    (await mapBounded(registry.repos, FLEET_CONCURRENCY, (repo) => gatherRepo(deps, cache, state, repo, now))).map(
      (entry) => [entry.name, entry],
    ),
  );
  // Only a shortcut: a cache that cannot be written makes the next fleet read git again, nothing worse.
  await cache.save(deps.fs, state).catch(() => undefined);
  // Every repo the file declares, in its order: a broken one with its problems instead of vanishing.
  const repos = declared.map((name) => gathered.get(name) ?? invalidEntry(name, problems));
  return { generatedAt: new Date(now).toISOString(), registry: registryFile, problems, repos };
}
