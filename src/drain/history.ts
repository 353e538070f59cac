// Every drain's summary, kept: orchestrate writes drains/<run id>.json beside
// last-drain.json (which status reads and which only ever holds the newest),
// so `agent-runner runs` can list manual drains too, not just the ones root
// dispatched. Readers that are root treat these files as hostile (the repo
// user writes them): parseDrainSummary validates the shape before anything
// is shown.
import type { FsPort } from '../ports.js';
import { drainHistoryDir, drainHistoryFile, lastDrainFile } from '../paths.js';
import type { DrainSummary, TaskSummary } from './types.js';

/** Run ids as orchestrate accepts them (--run-id), so they are safe file names. */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$/;
/** Far more than any real summary (one line per task). */
export const MAX_DRAIN_SUMMARY_BYTES = 1024 * 1024;

/** Writes the summary to the history first, then as the last drain. */
export async function recordDrain(fs: FsPort, workspaceState: string, summary: DrainSummary): Promise<void> {
  const text = `${JSON.stringify(summary, null, 2)}\n`;
  if (RUN_ID.test(summary.runId)) {
    await fs.mkdirp(drainHistoryDir(workspaceState), 0o700);
    await fs.writeAtomic(drainHistoryFile(workspaceState, summary.runId), text, 0o600);
  }
  await fs.writeAtomic(lastDrainFile(workspaceState), text, 0o600);
}

const OUTCOMES = new Set(['drained', 'nothing-to-do', 'failed', 'interrupted']);
const TASK_OUTCOMES = new Set(['landed', 'parked', 'blocked', 'failed', 'interrupted']);
const str = (value: unknown): value is string => typeof value === 'string';

function parseTask(value: unknown): TaskSummary | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const task = value as Record<string, unknown>;
  if (!str(task.id) || !str(task.title) || !str(task.outcome) || !TASK_OUTCOMES.has(task.outcome)) return undefined;
  return {
    id: task.id,
    title: task.title,
    outcome: task.outcome as TaskSummary['outcome'],
    durationMs: typeof task.durationMs === 'number' ? task.durationMs : 0,
    ...(str(task.reason) ? { reason: task.reason } : {}),
    ...(str(task.stagingCommit) ? { stagingCommit: task.stagingCommit } : {}),
  };
}

/** Pure: a summary file's text to a summary, or undefined when it is not one. */
export function parseDrainSummary(text: string): DrainSummary | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (
    !str(value.runId) ||
    !RUN_ID.test(value.runId) ||
    !str(value.outcome) ||
    !OUTCOMES.has(value.outcome) ||
    !Array.isArray(value.tasks)
  )
    return undefined;
  if (!str(value.startedAt) || !str(value.endedAt)) return undefined;
  const staging = value.staging as Record<string, unknown> | undefined;
  return {
    runId: value.runId,
    outcome: value.outcome as DrainSummary['outcome'],
    ...(str(value.failure) ? { failure: value.failure } : {}),
    tasks: value.tasks.map(parseTask).filter((task): task is TaskSummary => task !== undefined),
    staging: { base: str(staging?.base) ? staging.base : '', head: str(staging?.head) ? staging.head : '' },
    pushed: value.pushed === true,
    // What sessions cost is the ledger's (root-sealed), never a kept summary's.
    sessions: [],
    startedAt: value.startedAt,
    endedAt: value.endedAt,
  };
}

/** The last drain's summary, as orchestrate wrote it; undefined when there is none or it does not parse. */
export async function readLastDrain(fs: FsPort, workspaceState: string): Promise<DrainSummary | undefined> {
  const text = await fs.readTextIfExists(lastDrainFile(workspaceState));
  try {
    return text ? (JSON.parse(text) as DrainSummary) : undefined;
  } catch {
    return undefined;
  }
}
