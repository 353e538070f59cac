// Events from facts root already owns. Pure: a finished run record (what
// dispatch wrote) gives its parked and blocked tasks, the drain's end, a
// staging ready to promote and a budget hit; the watcher's own facts before
// and after a change (its hold, why it skipped the repo) give a budget hit, a
// rate-limit wait, a failed isolation check or a skipped repo when they
// start or change, never again while they last. Every event's key is built
// from the facts alone, so deriving twice spools once.
import type { RunRecord } from '../runs/index.js';
import type { NotifyEvent } from './kinds.js';

/** What the watcher knows that events come from (kept in the outbox's facts.json across restarts). */
export interface WatcherFacts {
  /** Why no run starts now, and whether a rate limit (else a daily budget) holds it. */
  readonly hold?: { readonly reason: string; readonly until: string; readonly rateLimit: boolean };
  /** The last tick skipped the repo: why, and whether its isolation check was what failed. */
  readonly skipped?: { readonly message: string; readonly isolation: boolean };
}

/** Staging as the drain left it: its commits, and how many the base lacks (undefined when not counted). */
export interface StagingFacts {
  readonly base: string;
  readonly head: string;
  readonly ahead: number | undefined;
}

const utcDay = (iso: string) => iso.slice(0, 10);
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

function budgetEvent(repo: string, at: string, reason: string, runId?: string): NotifyEvent {
  return {
    kind: 'budget-hit',
    repo,
    at,
    // Once per repo and UTC day, whether the drain or the watcher saw it first.
    key: `budget-hit:${utcDay(at)}`,
    summary: `${repo}: ${reason}`,
    details: { reason, ...(runId === undefined ? {} : { runId }) },
  };
}

/** Pure: the events of one finished run. */
export function eventsOfRun(record: RunRecord, staging: StagingFacts | undefined): NotifyEvent[] {
  if (record.status === 'running') return [];
  const at = record.endedAt ?? record.startedAt;
  const repo = record.repo;
  const events: NotifyEvent[] = [];
  const tasks = record.tasks ?? [];
  for (const task of tasks) {
    if (task.outcome !== 'parked' && task.outcome !== 'blocked') continue;
    const reason = task.reason ?? '(no reason given)';
    events.push({
      kind: task.outcome === 'parked' ? 'task-parked' : 'task-blocked',
      repo,
      at,
      key: `${record.id}:${task.id}:${task.outcome}`,
      summary: `${repo}: ${task.id} ${task.outcome}: ${reason}`,
      details: { runId: record.id, task: { id: task.id, title: task.title }, reason },
    });
  }
  const count = (outcome: string) => tasks.filter((task) => task.outcome === outcome).length;
  const counts = {
    landed: count('landed'),
    parked: count('parked'),
    blocked: count('blocked'),
    failed: count('failed'),
    interrupted: count('interrupted'),
  };
  const outcome = record.outcome ?? record.status;
  const ahead = staging?.ahead === undefined ? '' : `, staging ${plural(staging.ahead, 'commit')} ahead`;
  events.push({
    kind: 'drain-ended',
    repo,
    at,
    key: `${record.id}:drain-ended`,
    summary: `${repo}: drain ${outcome}: ${counts.landed} landed, ${counts.parked} parked, ${counts.blocked} blocked${ahead}`,
    details: {
      runId: record.id,
      outcome,
      exitCode: record.exitCode ?? null,
      ...counts,
      pushed: record.pushed ?? false,
      staging: staging ?? null,
      ...(record.detail === undefined ? {} : { detail: record.detail }),
    },
  });
  if (record.pushed && staging && staging.head !== staging.base && (staging.ahead ?? 1) > 0)
    events.push({
      kind: 'staging-ready',
      repo,
      at,
      // Once per staging commit: a later run that lands nothing does not say it again.
      key: `staging-ready:${staging.head}`,
      summary: `${repo}: staging ready to promote${ahead} (agent-runner promote --repo ${repo})`,
      details: { runId: record.id, staging, promote: `agent-runner promote --repo ${repo}` },
    });
  if (record.budgetStop !== undefined) events.push(budgetEvent(repo, at, record.budgetStop, record.id));
  return events;
}

/** Pure: the events of a change in the watcher's facts, seen at `at`. */
export function eventsOfWatcher(
  repo: string,
  previous: WatcherFacts,
  current: WatcherFacts,
  at: string,
): NotifyEvent[] {
  const events: NotifyEvent[] = [];
  const hold = current.hold;
  if (hold && (hold.reason !== previous.hold?.reason || hold.until !== previous.hold.until)) {
    if (hold.rateLimit)
      events.push({
        kind: 'rate-limit-wait',
        repo,
        at,
        key: `rate-limit-wait:${hold.until}`,
        summary: `${repo}: ${hold.reason}`,
        details: { reason: hold.reason, until: hold.until },
      });
    else if (previous.hold?.rateLimit !== false || previous.hold.until !== hold.until)
      events.push({ ...budgetEvent(repo, at, hold.reason), details: { reason: hold.reason, until: hold.until } });
  }
  const skipped = current.skipped;
  if (skipped && (skipped.message !== previous.skipped?.message || skipped.isolation !== previous.skipped.isolation)) {
    const kind = skipped.isolation ? 'isolation-failed' : 'repo-skipped';
    events.push({
      kind,
      repo,
      at,
      key: `${kind}:${at}`,
      summary: skipped.isolation
        ? `${repo}: isolation check failed, no run starts: ${skipped.message}`
        : `${repo}: skipped: ${skipped.message}`,
      details: { reason: skipped.message },
    });
  }
  return events;
}
