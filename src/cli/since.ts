// `--since` of logs, runs and ledger, one rule: a duration back from now
// (90m, 2h, 3d, 1w), today or yesterday (UTC midnight), a UTC day
// (2026-12-01) or a timestamp (2026-12-01T10:00, UTC unless it carries Z or
// an offset). Pure: the clock's now is a parameter.
import { UsageError } from '../errors.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;
const DAY_MS = UNIT_MS.d;
/** Ten years: a longer duration is a typo, and Date cannot hold much more anyway. */
const MAX_DURATION_MS = 3_650 * DAY_MS;

const DURATION = /^(\d{1,7})([smhdw])$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/;

function usage(flag: string, value: string, problem: string): UsageError {
  return new UsageError(
    `${flag} "${value}" ${problem}; give a duration (90m, 2h, 3d), yesterday, a day (2026-12-01) or a timestamp (2026-12-01T10:00, UTC)`,
  );
}

function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** A calendar date that really exists (2026-02-30 does not). */
function validDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Pure: the instant `value` names, in epoch milliseconds. Never in the future. */
export function parseSince(flag: string, value: string, now: number): number {
  const text = value.trim().toLowerCase();
  let at: number;
  const duration = DURATION.exec(text);
  const day = DAY.exec(text);
  const stamp = TIMESTAMP.exec(value.trim());
  if (duration) {
    const ms = Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS];
    if (ms > MAX_DURATION_MS) throw usage(flag, value, 'goes back more than ten years');
    at = now - ms;
  } else if (text === 'today') at = startOfUtcDay(now);
  else if (text === 'yesterday') at = startOfUtcDay(now) - DAY_MS;
  else if (day) {
    if (!validDay(Number(day[1]), Number(day[2]), Number(day[3]))) throw usage(flag, value, 'is not a calendar day');
    at = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
  } else if (stamp) {
    const [, year, month, dayOfMonth, hour, minute, second] = stamp;
    if (!validDay(Number(year), Number(month), Number(dayOfMonth))) throw usage(flag, value, 'is not a calendar day');
    if (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)
      throw usage(flag, value, 'is not a time of day');
    at = Date.parse(stamp[7] ? value.trim().replace(' ', 'T') : `${value.trim().replace(' ', 'T')}Z`);
    if (Number.isNaN(at)) throw usage(flag, value, 'is not a time');
  } else throw usage(flag, value, 'is not a time');
  if (at > now) throw usage(flag, value, `is in the future (now is ${new Date(now).toISOString()})`);
  return at;
}

/** The UTC day (YYYY-MM-DD) an instant falls on: the ledger is filed by day. */
export function utcDayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Pure: the transcript lines at or after `since`, by each event's `time`. A line without a readable time goes with
 * the line before it (kept when that one was).
 */
export function transcriptLinesSince(lines: readonly string[], since: number): string[] {
  let keep = false;
  return lines.filter((line) => {
    try {
      const time = (JSON.parse(line) as { time?: unknown }).time;
      const ms = typeof time === 'string' ? Date.parse(time) : Number.NaN;
      if (!Number.isNaN(ms)) keep = ms >= since;
    } catch {
      // Not JSON: goes with the line before.
    }
    return keep;
  });
}
