// Where one workspace's own files are (drain history, transcripts,
// attempts) and how they are read. Root reads them in the repo user's home,
// a user reads its own under AGENT_RUNNER_STATE: both through the same
// no-follow, bounded walk (FsPort.readUntrusted) from a trusted starting
// point, so `logs`, `runs` and the dashboard have one reader whoever runs
// them. Everything read here was written by the repo user (and so possibly
// by an agent): it is parsed, bounded and only ever displayed.
import * as path from 'node:path';
import type { FsPort, Ports } from '../../ports.js';
import type { RegistryRepo } from '../../types.js';
import {
  attemptsFile,
  drainHistoryDir,
  repoUserStateDir,
  reviewRecordFile,
  transcriptsDir,
  workspaceStateDir,
} from '../../paths.js';
import { MAX_DRAIN_SUMMARY_BYTES, parseDrainSummary } from '../../drain/history.js';
import type { DrainSummary } from '../../drain/types.js';
import { repoUser } from '../repo-user/index.js';
import { UntrustedPathError } from '../../errors.js';

export interface WorkspaceFiles {
  /** A directory the reader trusts (root: the user's home; a user: its own workspace state dir). */
  readonly root: string;
  /** The workspace state dir, relative to root ('' when it is root). */
  readonly base: string;
}

/** More entries than this in one records folder is not ours to list. */
const MAX_ENTRIES = 100_000;
const MAX_ATTEMPTS_BYTES = 1024 * 1024;
/** Transcript names: `<run id>-<task id>.jsonl`. */
const TRANSCRIPT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.jsonl$/;

export function recordsOfWorkspace(state: string, workspace: string): WorkspaceFiles {
  return { root: workspaceStateDir(state, workspace), base: '' };
}

/** Pure: a registered repo's records in its user's home, given that home. */
export function recordsAtHome(home: string, repo: Pick<RegistryRepo, 'path'>): WorkspaceFiles {
  return { root: home, base: path.relative(home, workspaceStateDir(repoUserStateDir(home), repo.path)) };
}

/** A registered repo's records, in its user's home (root's view). */
export async function recordsOfRepo(ports: Pick<Ports, 'process' | 'fs'>, repo: RegistryRepo): Promise<WorkspaceFiles> {
  return recordsAtHome((await repoUser(ports, repo)).home, repo);
}

const under = (where: WorkspaceFiles, dir: (workspaceState: string) => string) =>
  path.relative(where.root, dir(path.join(where.root, where.base)));

async function readOrSkip(
  fs: FsPort,
  where: WorkspaceFiles,
  relative: string,
  maxBytes: number,
): Promise<string | undefined> {
  try {
    return await fs.readUntrusted(where.root, relative, maxBytes);
  } catch (error) {
    // A link, a FIFO or an oversized file where a record should be: not a record.
    if (error instanceof UntrustedPathError) return undefined;
    throw error;
  }
}

/** Every drain the workspace kept, newest first (run ids sort by time). */
export async function readDrainHistory(fs: FsPort, where: WorkspaceFiles, limit = Infinity): Promise<DrainSummary[]> {
  const dir = under(where, drainHistoryDir);
  const names = (await fs.listUntrusted(where.root, dir, MAX_ENTRIES))
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort()
    .reverse();
  const drains: DrainSummary[] = [];
  for (const name of names) {
    if (drains.length >= limit) break;
    const text = await readOrSkip(fs, where, path.join(dir, name), MAX_DRAIN_SUMMARY_BYTES);
    const summary = text === undefined ? undefined : parseDrainSummary(text);
    if (summary) drains.push(summary);
  }
  return drains;
}

export interface TranscriptEntry {
  readonly name: string;
  /** The path relative to WorkspaceFiles.root. */
  readonly relative: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** The workspace's transcripts, oldest first (names start with the run id, which sorts by time). */
export async function listTranscripts(fs: FsPort, where: WorkspaceFiles): Promise<TranscriptEntry[]> {
  const dir = under(where, transcriptsDir);
  const entries: TranscriptEntry[] = [];
  for (const name of (await fs.listUntrusted(where.root, dir, MAX_ENTRIES))
    .filter((n) => TRANSCRIPT_NAME.test(n))
    .sort()) {
    const relative = path.join(dir, name);
    const stat = await fs.statUntrusted(where.root, relative);
    if (stat?.isFile) entries.push({ name, relative, size: stat.size, mtimeMs: stat.mtimeMs });
  }
  return entries;
}

/** A task's failed attempts as the drain counts them (undefined when it has none on record). */
export async function readTaskAttempts(
  fs: FsPort,
  where: WorkspaceFiles,
  taskId: string,
): Promise<{ failures: number; lastReason: string } | undefined> {
  const text = await readOrSkip(fs, where, under(where, attemptsFile), MAX_ATTEMPTS_BYTES);
  if (!text) return undefined;
  try {
    const record = (JSON.parse(text) as Record<string, { failures?: unknown; lastReason?: unknown }>)[taskId];
    if (!record || typeof record.failures !== 'number') return undefined;
    return { failures: record.failures, lastReason: typeof record.lastReason === 'string' ? record.lastReason : '' };
  } catch {
    return undefined;
  }
}

/** What review said of a task, as the dashboard shows it: the ending and each round's judgement and findings. */
export interface TaskReviewView {
  readonly approved: boolean;
  /** The trailer when approved, else why it did not land. */
  readonly outcome: string;
  readonly reviewer: string;
  readonly rounds: readonly { readonly round: number; readonly judgement: string; readonly lines: readonly string[] }[];
}

const MAX_REVIEW_RECORD_BYTES = 512 * 1024;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A task's review record (drain/review/records.ts), read like every record of the runner's: bounded, no links. */
export async function readTaskReview(
  fs: FsPort,
  where: WorkspaceFiles,
  taskId: string,
): Promise<TaskReviewView | undefined> {
  const raw = await readOrSkip(
    fs,
    where,
    under(where, (state) => reviewRecordFile(state, taskId)),
    MAX_REVIEW_RECORD_BYTES,
  );
  if (!raw) return undefined;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!record || typeof record !== 'object') return undefined;
  const reviewer = (record.reviewer ?? {}) as Record<string, unknown>;
  const rounds = Array.isArray(record.rounds) ? (record.rounds as Record<string, unknown>[]) : [];
  return {
    approved: record.approved === true,
    outcome: text(record.outcome),
    reviewer: `${text(reviewer.assistant) || '?'}/${text(reviewer.model) || 'default'}`,
    rounds: rounds.slice(0, 20).map((round) => ({
      round: typeof round.round === 'number' ? round.round : 0,
      judgement: text(round.judgement),
      lines: [
        ...(text(round.detail) ? [text(round.detail)] : []),
        ...(Array.isArray(round.unmet)
          ? [`unmet: ${(round.unmet as unknown[]).map((n) => `#${String(n)}`).join(' ')}`]
          : []),
        ...(Array.isArray(round.findings)
          ? (round.findings as Record<string, unknown>[])
              .slice(0, 10)
              .map(
                (finding) => `[${text(finding.severity)}] ${text(finding.location) || '-'}: ${text(finding.message)}`,
              )
          : []),
      ].filter((line) => line !== 'unmet: '),
    })),
  };
}
