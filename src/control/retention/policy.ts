// How long records are kept, and which ones have expired. Pure: the records
// and the time come in, the names to remove go out. A record of a run that
// is still running is never expired, however old it is.

/** The registry's retention_days when it says nothing. */
export const DEFAULT_RETENTION_DAYS = 30;
export const MAX_RETENTION_DAYS = 3650;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The watcher applies retention at most this often. */
export const RETENTION_INTERVAL_MS = DAY_MS;

export function retentionDays(repo: { readonly retentionDays?: number }): number {
  return repo.retentionDays ?? DEFAULT_RETENTION_DAYS;
}

export interface AgedRecord {
  readonly name: string;
  /** When it was finished (ms); NaN or undefined when unknown: then its file's mtime counts. */
  readonly finishedMs: number | undefined;
  readonly mtimeMs: number;
  readonly running: boolean;
}

/** The names of records finished more than `days` ago; never a running one. */
export function expiredRecords(records: readonly AgedRecord[], now: number, days: number): string[] {
  const cutoff = now - days * DAY_MS;
  return records
    .filter((record) => !record.running)
    .filter((record) => {
      const at =
        record.finishedMs !== undefined && Number.isFinite(record.finishedMs) ? record.finishedMs : record.mtimeMs;
      return at < cutoff;
    })
    .map((record) => record.name);
}

/** Whether the watcher's daily pass is due, from when it last ran (ms, undefined: never). */
export function retentionDue(lastMs: number | undefined, now: number): boolean {
  return lastMs === undefined || !Number.isFinite(lastMs) || now - lastMs >= RETENTION_INTERVAL_MS || lastMs > now;
}
