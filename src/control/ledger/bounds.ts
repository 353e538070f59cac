// What a ledger field may hold, said once for both kinds of record: a count
// in range or unknown (null), a name of safe characters or unknown. Pure.

/** More tokens than this in one record is not believable: unknown. */
export const MAX_TOKENS = 1e12;
/** More USD than this for one session or one response is not believable: unknown. */
export const MAX_RECORD_USD = 100_000;
/** A model, effort or session name: printable, no spaces or control characters, at most 100 characters. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,99}$/;

/** A number in [0, max], else unknown (null): never zero for a value that is missing or absurd. */
export function count(value: unknown, max: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= max ? value : null;
}

/** A safe name, else unknown (null). */
export function nameOrNull(value: unknown): string | null {
  return typeof value === 'string' && NAME.test(value) ? value : null;
}

/** An ISO time as written by root (toISOString), the only form the ledger holds. */
export function isLedgerTime(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) &&
    !Number.isNaN(Date.parse(value))
  );
}
