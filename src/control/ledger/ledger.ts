// The ledger: one append-only record per agent session, kept by root in
// $STATE/repos/NAME/ledger/<UTC day>.jsonl (root-only 0700, like the run
// records), so no agent can edit its own bill. Root seals a run's sessions
// after orchestrate ends, from the summary orchestrate printed on the pipe
// root holds; every field is checked and bounded, the repo, run and seal
// time are root's own, and a value that is missing or out of range is
// recorded as unknown (null), never as zero. A run that ended without a
// summary gets one "no report" record: its usage is unknown, not nothing.
// Beside them, a run served by a broker has one record per metered provider
// response (metered.ts, `source: 'broker'`), appended while the run goes on;
// how the two kinds are summed is counting.ts's one rule.
import type { FsPort } from '../../ports.js';
import type { OrchestrateSummary, SessionReport } from '../../drain/types.js';
import { ledgerDir, ledgerFile } from '../../paths.js';
import { ensureRepoStateDir, ROOT_ONLY_DIR_MODE } from '../state-dirs.js';
import { isSafeTaskId } from '../../board/parse.js';
import { utcDay } from '../../spend/verdict.js';
import type { UsageRecord } from '../../broker/types.js';
import { priceOf } from '../../broker/prices.js';
import { count, MAX_RECORD_USD, MAX_TOKENS, nameOrNull } from './bounds.js';
import { brokerLedgerRecord, brokerLineProblem, type BrokerLedgerRecord, type BrokerLedgerResult } from './metered.js';

/** A session as root sealed it: the drain's report, checked, with the repo, run and seal time root stamps. */
export interface SessionLedgerRecord extends Omit<SessionReport, 'taskId'> {
  readonly v: 1;
  /** Only a broker's record has a source. */
  readonly source?: undefined;
  readonly repo: string;
  readonly run: string;
  /** null for a run that reported no sessions it may have had. */
  readonly task: string | null;
  /** When root wrote it. */
  readonly sealedAt: string;
}

/** A line of the ledger: a session the drain reported, or a response the run's broker metered. */
export type LedgerRecord = SessionLedgerRecord | BrokerLedgerRecord;

/** More sessions than this in one run is not believable; the rest is one unknown record. */
export const MAX_SESSIONS_PER_RUN = 5000;
const ASSISTANTS = new Set(['claude', 'codex', 'command']);
/** What a session was for; a report without a role (an older drain's) was the task's own work. */
const ROLES = new Set(['implement', 'fix', 'review']);

export interface RunToSeal {
  readonly repo: string;
  readonly runId: string;
  readonly startedAt: string;
  readonly endedAt: string;
  /** The summary orchestrate printed, if it printed one. */
  readonly summary: OrchestrateSummary | undefined;
  readonly sealedAt: string;
}

/** An ISO time inside the run, else the run's own bound. */
function timeWithin(value: unknown, run: RunToSeal, fallback: string): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  const start = Date.parse(run.startedAt);
  const end = Date.parse(run.endedAt);
  if (Number.isNaN(at) || at < start || at > end) return fallback;
  return new Date(at).toISOString();
}

function unknownRecord(run: RunToSeal, outcome: string): SessionLedgerRecord {
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
export function sealSession(
  report: Partial<Record<keyof SessionReport, unknown>>,
  run: RunToSeal,
): SessionLedgerRecord {
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
    model: nameOrNull(report.model),
    effort: nameOrNull(report.effort),
    startedAt,
    endedAt: endedAt < startedAt ? startedAt : endedAt,
    wallMs: Math.max(0, Date.parse(endedAt) - Date.parse(startedAt)),
    inputTokens: count(report.inputTokens, MAX_TOKENS),
    outputTokens: count(report.outputTokens, MAX_TOKENS),
    cacheReadTokens: count(report.cacheReadTokens, MAX_TOKENS),
    cacheWriteTokens: count(report.cacheWriteTokens, MAX_TOKENS),
    costUsd: count(report.costUsd, MAX_RECORD_USD),
    outcome:
      typeof report.outcome === 'string' && /^[a-z][a-z-]{0,39}$/.test(report.outcome) ? report.outcome : 'unknown',
    rateLimited: report.rateLimited === true,
    sealedAt: run.sealedAt,
  };
}

/** Pure: the ledger records of a finished run. */
export function sealRun(run: RunToSeal): SessionLedgerRecord[] {
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

/**
 * Appends one response a run's broker metered, the moment it arrives: checked and priced by brokerLedgerRecord, and
 * refused (nothing written) when it names a repo other than `repo`, the broker's own. Returns what was decided, for
 * the caller's log.
 */
export async function appendBrokerUsage(
  fs: FsPort,
  state: string,
  repo: string,
  record: UsageRecord,
  sealedAt: string,
): Promise<BrokerLedgerResult> {
  const result = brokerLedgerRecord(record, sealedAt, priceOf);
  if (!result.ok) return { ok: false, reason: `a usage record from the broker of repo ${repo}: ${result.reason}` };
  if (result.record.repo !== repo)
    return {
      ok: false,
      reason: `a usage record from the broker of repo ${repo} names repo ${result.record.repo}; not recorded`,
    };
  await appendLedger(fs, state, repo, [result.record]);
  return result;
}

/** Whether a parsed line is a record root wrote: a broker's checked whole, a session's by its frame as before. */
function isLedgerRecord(value: unknown): value is LedgerRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const line = value as Record<string, unknown>;
  if (line.v !== 1) return false;
  if (line.source === 'broker') return brokerLineProblem(line) === undefined;
  return line.source === undefined && typeof line.repo === 'string' && typeof line.endedAt === 'string';
}

/** Pure: a ledger file's text to records; a torn, malformed or foreign line is skipped. */
export function parseLedger(text: string): LedgerRecord[] {
  const records: LedgerRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isLedgerRecord(value)) records.push(value);
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
