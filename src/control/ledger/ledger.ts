// The ledger: one append-only record per agent session, kept by root in
// $STATE/repos/NAME/ledger/<UTC day>.jsonl (root-only 0700, like the run
// records), so no agent can edit its own bill. Root seals a run's sessions
// after orchestrate ends, from the summary orchestrate printed on the pipe
// root holds; every field is checked and bounded, the repo, run and seal
// time are root's own, and a value that is missing or out of range is
// recorded as unknown (null), never as zero. A run that ended without a
// summary gets one "no report" record: its usage is unknown, not nothing.
import type { FsPort } from '../../ports.js';
import type { OrchestrateSummary, SessionReport } from '../../drain/types.js';
import { ledgerDir, ledgerFile } from '../../paths.js';
import { ensureRepoStateDir, ROOT_ONLY_DIR_MODE } from '../state-dirs.js';
import { isSafeTaskId } from '../../board/parse.js';
import { utcDay } from '../../spend/verdict.js';

/** A session as root sealed it: the drain's report, checked, with the repo, run and seal time root stamps. */
export interface LedgerRecord extends Omit<SessionReport, 'taskId'> {
  readonly v: 1;
  readonly repo: string;
  readonly run: string;
  /** null for a run that reported no sessions it may have had. */
  readonly task: string | null;
  /** When root wrote it. */
  readonly sealedAt: string;
}

/** More sessions than this in one run is not believable; the rest is one unknown record. */
export const MAX_SESSIONS_PER_RUN = 5000;
const MAX_TOKENS = 1e12;
const MAX_SESSION_USD = 100_000;
const ASSISTANTS = new Set(['claude', 'codex', 'command']);
/** What a session was for; a report without a role (an older drain's) was the task's own work. */
const ROLES = new Set(['implement', 'fix', 'review']);
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,99}$/;

export interface RunToSeal {
  readonly repo: string;
  readonly runId: string;
  readonly startedAt: string;
  readonly endedAt: string;
  /** The summary orchestrate printed, if it printed one. */
  readonly summary: OrchestrateSummary | undefined;
  readonly sealedAt: string;
}

function count(value: unknown, max: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max ? value : null;
}

/** An ISO time inside the run, else the run's own bound. */
function timeWithin(value: unknown, run: RunToSeal, fallback: string): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  const start = Date.parse(run.startedAt);
  const end = Date.parse(run.endedAt);
  if (Number.isNaN(at) || at < start || at > end) return fallback;
  return new Date(at).toISOString();
}

function unknownRecord(run: RunToSeal, outcome: string): LedgerRecord {
  return {
    v: 1,
    repo: run.repo,
    run: run.runId,
    task: null,
    assistant: 'unknown',
    role: 'implement',
    model: null,
    effort: null,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    wallMs: Math.max(0, Date.parse(run.endedAt) - Date.parse(run.startedAt)),
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    costUsd: null,
    outcome,
    rateLimited: false,
    sealedAt: run.sealedAt,
  };
}

/** Pure: one reported session, checked, as root records it. */
export function sealSession(report: Partial<Record<keyof SessionReport, unknown>>, run: RunToSeal): LedgerRecord {
  const text = (value: unknown) => (typeof value === 'string' && NAME.test(value) ? value : null);
  const startedAt = timeWithin(report.startedAt, run, run.startedAt);
  const endedAt = timeWithin(report.endedAt, run, run.endedAt);
  return {
    v: 1,
    repo: run.repo,
    run: run.runId,
    task: typeof report.taskId === 'string' && isSafeTaskId(report.taskId) ? report.taskId : null,
    assistant: typeof report.assistant === 'string' && ASSISTANTS.has(report.assistant) ? report.assistant : 'unknown',
    role:
      typeof report.role === 'string' && ROLES.has(report.role) ? (report.role as SessionReport['role']) : 'implement',
    model: text(report.model),
    effort: text(report.effort),
    startedAt,
    endedAt: endedAt < startedAt ? startedAt : endedAt,
    wallMs: Math.max(0, Date.parse(endedAt) - Date.parse(startedAt)),
    inputTokens: count(report.inputTokens, MAX_TOKENS),
    outputTokens: count(report.outputTokens, MAX_TOKENS),
    cacheReadTokens: count(report.cacheReadTokens, MAX_TOKENS),
    cacheWriteTokens: count(report.cacheWriteTokens, MAX_TOKENS),
    costUsd: count(report.costUsd, MAX_SESSION_USD),
    outcome:
      typeof report.outcome === 'string' && /^[a-z][a-z-]{0,39}$/.test(report.outcome) ? report.outcome : 'unknown',
    rateLimited: report.rateLimited === true,
    sealedAt: run.sealedAt,
  };
}

/** Pure: the ledger records of a finished run. */
export function sealRun(run: RunToSeal): LedgerRecord[] {
  const sessions: unknown = run.summary?.sessions;
  if (!Array.isArray(sessions)) return [unknownRecord(run, run.summary ? 'no-session-report' : 'no-summary')];
  const records = sessions
    .slice(0, MAX_SESSIONS_PER_RUN)
    .map((session: unknown) =>
      session && typeof session === 'object'
        ? sealSession(session as Record<string, unknown>, run)
        : unknownRecord(run, 'unreadable-report'),
    );
  if (sessions.length > MAX_SESSIONS_PER_RUN) records.push(unknownRecord(run, 'too-many-sessions'));
  return records;
}

/** Appends records to the day file of each (its end's UTC day). */
export async function appendLedger(
  fs: FsPort,
  state: string,
  repo: string,
  records: readonly LedgerRecord[],
): Promise<void> {
  if (!records.length) return;
  await ensureRepoStateDir(fs, state, repo);
  await fs.mkdirp(ledgerDir(state, repo), ROOT_ONLY_DIR_MODE);
  const byDay = new Map<string, string[]>();
  for (const record of records) {
    const day = utcDay(Date.parse(record.endedAt));
    byDay.set(day, [...(byDay.get(day) ?? []), JSON.stringify(record)]);
  }
  // One append per day file: a run's records land together.
  for (const [day, lines] of byDay) await fs.appendLine(ledgerFile(state, repo, day), lines.join('\n'));
}

/** Pure: a ledger file's text to records; a torn or foreign line is skipped. */
export function parseLedger(text: string): LedgerRecord[] {
  const records: LedgerRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as LedgerRecord;
      if (value.v === 1 && typeof value.repo === 'string' && typeof value.endedAt === 'string') records.push(value);
    } catch {
      // a line cut by a crash mid-append
    }
  }
  return records;
}

/** The days a repo's ledger has, oldest first. */
export async function ledgerDays(fs: FsPort, state: string, repo: string): Promise<string[]> {
  return (await fs.list(ledgerDir(state, repo)))
    .filter((name) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name))
    .map((name) => name.slice(0, 10))
    .sort();
}

/** A repo's records from `since` (a UTC day, inclusive) on; all of them without it. */
export async function readLedger(fs: FsPort, state: string, repo: string, since?: string): Promise<LedgerRecord[]> {
  const days = (await ledgerDays(fs, state, repo)).filter((day) => since === undefined || day >= since);
  const records: LedgerRecord[] = [];
  for (const day of days) records.push(...parseLedger((await fs.readTextIfExists(ledgerFile(state, repo, day))) ?? ''));
  return records;
}
