// Run records: one JSON file per dispatch under <state>/repos/NAME/runs/,
// written when the run starts (before the drain can change anything) and
// rewritten when it ends, so a restart always knows what was in flight.
import type { FsPort } from '../../ports.js';
import { runFile, runsDir } from '../../paths.js';
import { ensureRepoStateDir, ROOT_ONLY_DIR_MODE } from '../state-dirs.js';
import type { GateRunSummary, OrchestrateSummary, TaskSummary } from '../../drain/types.js';
import { isSafeTaskId } from '../../board/parse.js';

export type RunTrigger = 'manual' | 'watch' | 'job';

export type RunStatus = 'running' | 'finished' | 'interrupted';

export interface RunRecord {
  readonly id: string;
  readonly repo: string;
  readonly trigger: RunTrigger;
  readonly jobId?: string;
  readonly user: string;
  /** The orchestrate arguments beyond workspace/json/run-id/progress. */
  readonly args: readonly string[];
  readonly status: RunStatus;
  readonly startedAt: string;
  readonly endedAt?: string;
  /** The orchestrate process (it leads its own process group), once started. */
  readonly process?: { readonly pid: number; readonly startTime: string | undefined };
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly outcome?: OrchestrateSummary['outcome'] | 'error';
  readonly tasks?: readonly TaskSummary[];
  readonly staging?: OrchestrateSummary['staging'];
  readonly pushed?: boolean;
  /** Every gate run of the drain, in order, as its summary said (checked: gatesOf); the metrics' gate figures. */
  readonly gates?: readonly GateRunSummary[];
  /** Why the run failed or was interrupted, or what it has to say (a --task already landed), in words. */
  readonly detail?: string;
  /** What the run's agent sessions cost, as sealed into the ledger (dispatch/usage.ts). */
  readonly usage?: RunUsage;
  /** The repo went over a daily budget during or before the run: no new task started. */
  readonly budgetStop?: string;
  /** Where the run's processes lived and their limits (dispatch/limits.ts). */
  readonly confinement?: {
    readonly kind: 'systemd-scope' | 'rlimits';
    readonly unit?: string;
    readonly tasksMax: number;
    readonly memoryMax: number;
    readonly cpuWeight: number;
  };
  /** The user's processes left when orchestrate ended, and what became of them (dispatch/user-sweep.ts). */
  readonly leftovers?: {
    readonly found: number;
    readonly killed: boolean;
    readonly survivors: readonly { readonly pid: number; readonly name: string }[];
    readonly summary: string;
  };
}

export interface RunUsage {
  readonly sessions: number;
  readonly costUsd: number;
  /** Records that carried no cost (not in costUsd). */
  readonly unknownCost: number;
  readonly tokens: number;
  /** A run its broker metered: the figures above are the broker's (control/ledger/counting.ts). */
  readonly metered?: {
    /** Metered responses the figures sum. */
    readonly responses: number;
    /** What the run's agents reported, beside: never in the figures above. */
    readonly agentReported: { readonly costUsd: number; readonly unknownCost: number; readonly tokens: number };
  };
}

export async function writeRun(fs: FsPort, state: string, record: RunRecord): Promise<void> {
  await ensureRepoStateDir(fs, state, record.repo);
  await fs.mkdirp(runsDir(state, record.repo), ROOT_ONLY_DIR_MODE);
  await fs.writeAtomic(runFile(state, record.repo, record.id), `${JSON.stringify(record, null, 2)}\n`, 0o600);
}

export async function readRun(fs: FsPort, state: string, repo: string, runId: string): Promise<RunRecord | undefined> {
  const text = await fs.readTextIfExists(runFile(state, repo, runId));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as RunRecord;
  } catch {
    return undefined;
  }
}

/** Run ids, oldest first (ids sort by creation time). */
export async function listRunIds(fs: FsPort, state: string, repo: string): Promise<string[]> {
  return (await fs.list(runsDir(state, repo)))
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .map((name) => name.slice(0, -'.json'.length))
    .sort();
}

/** The newest runs, newest first. */
export async function latestRuns(fs: FsPort, state: string, repo: string, count: number): Promise<RunRecord[]> {
  const ids = (await listRunIds(fs, state, repo)).slice(-count).reverse();
  const records: RunRecord[] = [];
  for (const id of ids) {
    const record = await readRun(fs, state, repo, id);
    if (record) records.push(record);
  }
  return records;
}

/**
 * Pure: orchestrate's stdout to its summary. It prints one JSON object last;
 * anything before it (there should be nothing) is ignored.
 */
export function parseOrchestrateSummary(stdout: string): OrchestrateSummary | undefined {
  const lines = stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const candidates = [stdout.trim(), ...lines.reverse()];
  for (const candidate of candidates) {
    if (!candidate.startsWith('{')) continue;
    try {
      const value = JSON.parse(candidate) as Partial<OrchestrateSummary>;
      if (typeof value.outcome === 'string' && Array.isArray(value.tasks)) return value as OrchestrateSummary;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** The summary's failure, else its note; a string only (the summary is the repo user's output), on one line. */
function detailOf(summary: OrchestrateSummary): string | undefined {
  const text = typeof summary.failure === 'string' ? summary.failure : summary.note;
  return typeof text === 'string' && text.trim() ? text.replace(/\s+/g, ' ').trim().slice(0, 2000) : undefined;
}

/** More gate runs than this in one drain is not believable; the rest are left out. */
const MAX_GATE_RUNS = 1000;
/** A gate run longer than a week is not one: its duration is not believed. */
const MAX_GATE_MS = 7 * 24 * 3600 * 1000;

/**
 * Pure: the summary's gate runs as a record keeps them: each with a boolean verdict and a duration in range (others
 * are dropped), at most MAX_GATE_RUNS, task ids only when safe. The summary is the repo user's output.
 */
export function gatesOf(value: unknown): GateRunSummary[] {
  if (!Array.isArray(value)) return [];
  const gates: GateRunSummary[] = [];
  for (const item of value.slice(0, MAX_GATE_RUNS)) {
    if (typeof item !== 'object' || item === null) continue;
    const gate = item as Record<string, unknown>;
    const ms = gate.durationMs;
    if (typeof gate.ok !== 'boolean' || typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_GATE_MS)
      continue;
    const tasks = Array.isArray(gate.tasks)
      ? gate.tasks.filter((id): id is string => typeof id === 'string' && isSafeTaskId(id)).slice(0, 64)
      : [];
    gates.push({ tasks, ok: gate.ok, durationMs: ms });
  }
  return gates;
}

/** Pure: the finished record from the started one and how orchestrate ended. */
export function finishRun(
  started: RunRecord,
  ended: {
    exitCode: number | null;
    signal: string | null;
    stdout: string;
    stderrTail: string;
    endedAt: string;
    interrupted: boolean;
  },
): RunRecord {
  const summary = parseOrchestrateSummary(ended.stdout);
  const base = { ...started, endedAt: ended.endedAt, exitCode: ended.exitCode, signal: ended.signal };
  if (summary) {
    const interrupted = summary.outcome === 'interrupted' || ended.interrupted;
    return {
      ...base,
      status: interrupted ? 'interrupted' : 'finished',
      outcome: summary.outcome,
      tasks: summary.tasks,
      ...(summary.staging ? { staging: summary.staging } : {}),
      ...(summary.pushed === undefined ? {} : { pushed: summary.pushed }),
      ...(Array.isArray(summary.gates) ? { gates: gatesOf(summary.gates) } : {}),
      ...(detailOf(summary) === undefined ? {} : { detail: detailOf(summary) }),
    };
  }
  const why = ended.signal
    ? `orchestrate was ended by ${ended.signal}`
    : `orchestrate exited ${ended.exitCode} without a summary`;
  const tail = ended.stderrTail.trim().split('\n').slice(-3).join(' | ');
  return {
    ...base,
    status: ended.interrupted ? 'interrupted' : 'finished',
    outcome: ended.interrupted ? 'interrupted' : 'error',
    tasks: [],
    detail: tail ? `${why}: ${tail}` : why,
  };
}
