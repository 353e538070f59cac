// When an agent's usage limit resets, read from its own message. The CLIs say
// it in several shapes, and the relative ones ("resets 7pm (Europe/Berlin)",
// "try again in 2 hours") need the moment the message was seen: `now`.
// Pure: time zones come from Intl, never from the host's clock or TZ.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_MS = 24 * 60 * 60 * 1000;

/** Offset of a time zone from UTC at an instant, in ms; undefined for an unknown zone. */
function zoneOffset(instant: number, timeZone: string): number | undefined {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(new Date(instant));
  } catch {
    return undefined;
  }
  const part = (type: string) => Number(parts.find((candidate) => candidate.type === type)?.value);
  const asUtc = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant a wall-clock time in a zone names (two passes settle DST edges). */
function zonedInstant(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  timeZone: string,
): number | undefined {
  const wall = Date.UTC(year, month, day, hour, minute);
  const first = zoneOffset(wall, timeZone);
  if (first === undefined) return undefined;
  const second = zoneOffset(wall - first, timeZone) ?? first;
  return wall - second;
}

/** Today's date in the zone, as [year, month (0-based), day]. */
function zonedDate(instant: number, timeZone: string): [number, number, number] | undefined {
  const offset = zoneOffset(instant, timeZone);
  if (offset === undefined) return undefined;
  const shifted = new Date(instant + offset);
  return [shifted.getUTCFullYear(), shifted.getUTCMonth(), shifted.getUTCDate()];
}

function to24h(hour: number, meridiem: string | undefined): number {
  if (!meridiem) return hour;
  const pm = meridiem.toLowerCase() === 'pm';
  return (hour % 12) + (pm ? 12 : 0);
}

/**
 * The reset time as ISO 8601, or undefined when the message does not say
 * (or says it relative to a moment we were not given).
 */
export function parseResetTime(message: string, now: number | undefined): string | undefined {
  // Claude Code 1.x: "Claude AI usage limit reached|1762952400" (epoch seconds).
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(message);
  if (epoch) return new Date(Number(epoch[1]) * 1000).toISOString();

  if (now === undefined) return undefined;

  // Claude Code 2.x: "resets 7pm (America/Los_Angeles)", "resets Apr 23 at 4pm (America/Recife)",
  // older: "Your limit will reset at 9am (America/Chicago)".
  const clock =
    /resets?\s+(?:at\s+)?(?:([A-Za-z]{3})[a-z]*\s+(\d{1,2})\s+at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*\(([A-Za-z0-9_/+-]+)\)/i.exec(
      message,
    );
  if (clock) {
    const [, monthName, dayText, hourText = '', minuteText, meridiem, zone = ''] = clock;
    const hour = to24h(Number(hourText), meridiem);
    const minute = Number(minuteText ?? 0);
    const today = zonedDate(now, zone);
    if (!today || hour > 23 || minute > 59) return undefined;
    let instant: number | undefined;
    if (monthName && dayText) {
      const month = MONTHS.indexOf(monthName.toLowerCase());
      if (month < 0) return undefined;
      instant = zonedInstant(today[0], month, Number(dayText), hour, minute, zone);
      // "Jan 2" seen on Dec 30 is next year.
      if (instant !== undefined && instant < now - DAY_MS)
        instant = zonedInstant(today[0] + 1, month, Number(dayText), hour, minute, zone);
    } else {
      instant = zonedInstant(today[0], today[1], today[2], hour, minute, zone);
      if (instant !== undefined && instant <= now)
        instant = zonedInstant(today[0], today[1], today[2] + 1, hour, minute, zone);
    }
    return instant === undefined ? undefined : new Date(instant).toISOString();
  }

  // Codex: "try again in 4 days 2 hours 3 minutes", "try again in 37 seconds".
  const relative = /try again in\s+((?:\d+\s*(?:days?|hours?|minutes?|mins?|seconds?|secs?|[dhms])[\s,and]*)+)/i.exec(
    message,
  );
  if (relative) {
    const units: Record<string, number> = { d: DAY_MS, h: 3_600_000, m: 60_000, s: 1000 };
    let total = 0;
    for (const match of relative[1]!.matchAll(/(\d+)\s*([a-z]+)/gi)) {
      const unit = match[2]!.toLowerCase();
      total += Number(match[1]) * (units[unit.startsWith('mi') ? 'm' : unit[0]!] ?? 0);
    }
    return total > 0 ? new Date(now + total).toISOString() : undefined;
  }
  return undefined;
}
