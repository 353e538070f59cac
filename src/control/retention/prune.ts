// Retention applied: root's records of a repo (run records, finished spool
// jobs) in root's state dir, and a workspace's own records (transcripts, the
// drain history) by their owner, under the workspace lock, so no drain is
// writing them meanwhile. `gc` does both; the watcher does both once a day
// (the workspace part as the repo user, through `gc --retention-only`).
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import type { Command, RegistryRepo } from '../../types.js';
import { drainHistoryDir, runsDir, spoolStateDir, transcriptsDir } from '../../paths.js';
import { expiredRecords, type AgedRecord } from './policy.js';
import { runnerCommandAsUser, type Install, type UserAccount } from '../repo-user/index.js';

export interface Pruned {
  readonly runRecords: number;
  readonly jobs: number;
  readonly transcripts: number;
  readonly drains: number;
}

export const NOTHING_PRUNED: Pruned = { runRecords: 0, jobs: 0, transcripts: 0, drains: 0 };

async function aged(
  fs: FsPort,
  dir: string,
  suffix: string,
  finished: (text: string) => { finishedMs: number | undefined; running: boolean },
): Promise<AgedRecord[]> {
  const records: AgedRecord[] = [];
  for (const name of (await fs.list(dir)).filter((n) => n.endsWith(suffix) && !n.startsWith('.'))) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file);
    if (!stat || stat.isDirectory) continue;
    let facts: { finishedMs: number | undefined; running: boolean } = { finishedMs: undefined, running: false };
    if (suffix === '.json') {
      try {
        facts = finished((await fs.readTextIfExists(file)) ?? '');
      } catch {
        // An unreadable record is aged by its file's time.
      }
    }
    records.push({ name, mtimeMs: stat.mtimeMs, ...facts });
  }
  return records;
}

async function removeExpired(
  fs: FsPort,
  dir: string,
  records: readonly AgedRecord[],
  now: number,
  days: number,
  dryRun: boolean,
): Promise<number> {
  const names = expiredRecords(records, now, days);
  if (!dryRun) for (const name of names) await fs.remove(path.join(dir, name));
  return names.length;
}

/** Root's records of one repo: run records (never one still running) and jobs in done/ and failed/. */
export async function pruneRootRecords(
  fs: FsPort,
  state: string,
  repo: string,
  days: number,
  now: number,
  /** Count what would go, remove nothing (`gc --dry-run`). */
  dryRun = false,
): Promise<Pick<Pruned, 'runRecords' | 'jobs'>> {
  const runs = runsDir(state, repo);
  const runRecords = await removeExpired(
    fs,
    runs,
    await aged(fs, runs, '.json', (text) => {
      const record = JSON.parse(text) as { status?: unknown; endedAt?: unknown };
      return {
        running: record.status === 'running',
        finishedMs: typeof record.endedAt === 'string' ? Date.parse(record.endedAt) : undefined,
      };
    }),
    now,
    days,
    dryRun,
  );
  let jobs = 0;
  for (const where of ['done', 'failed'] as const) {
    const dir = spoolStateDir(state, repo, where);
    jobs += await removeExpired(
      fs,
      dir,
      await aged(fs, dir, '.json', (text) => {
        const job = JSON.parse(text) as { result?: { finishedAt?: unknown } };
        return {
          running: false,
          finishedMs: typeof job.result?.finishedAt === 'string' ? Date.parse(job.result.finishedAt) : undefined,
        };
      }),
      now,
      days,
      dryRun,
    );
  }
  return { runRecords, jobs };
}

/** A workspace's own records, by their owner holding the workspace lock: transcripts and drain summaries. */
export async function pruneWorkspaceRecords(
  fs: FsPort,
  workspaceState: string,
  days: number,
  now: number,
  /** Count what would go, remove nothing (`gc --dry-run`). */
  dryRun = false,
): Promise<Pick<Pruned, 'transcripts' | 'drains'>> {
  const transcripts = transcriptsDir(workspaceState);
  const drains = drainHistoryDir(workspaceState);
  return {
    transcripts: await removeExpired(
      fs,
      transcripts,
      await aged(fs, transcripts, '.jsonl', () => ({ finishedMs: undefined, running: false })),
      now,
      days,
      dryRun,
    ),
    drains: await removeExpired(
      fs,
      drains,
      await aged(fs, drains, '.json', (text) => {
        const drain = JSON.parse(text) as { endedAt?: unknown };
        return {
          running: false,
          finishedMs: typeof drain.endedAt === 'string' ? Date.parse(drain.endedAt) : undefined,
        };
      }),
      now,
      days,
      dryRun,
    ),
  };
}

/** Pure: `gc --retention-only` as the repo user, for the watcher's daily pass. */
export function retentionCommandAsUser(install: Install, repo: RegistryRepo, user: UserAccount, days: number): Command {
  return runnerCommandAsUser(install, repo, user, [
    'gc',
    '--retention-only',
    '--retention-days',
    String(days),
    '--json',
    // Asked nothing: the watcher has no terminal, and retention is what the registry already decided.
    '--yes',
    '--workspace',
    repo.path,
  ]);
}

export function describePruned(pruned: Pruned, days: number): string {
  const total = pruned.runRecords + pruned.jobs + pruned.transcripts + pruned.drains;
  if (!total) return `nothing older than ${days} days`;
  return `removed what was older than ${days} days: ${pruned.transcripts} transcript(s), ${pruned.runRecords} run record(s), ${pruned.drains} drain summary(ies), ${pruned.jobs} finished job(s)`;
}
