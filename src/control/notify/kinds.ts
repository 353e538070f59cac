// The events a webhook may be sent, named once: the registry validates its
// `events` lists against these names, the watcher derives them, the bodies
// describe them.
export const NOTIFY_EVENT_KINDS = [
  'task-parked',
  'task-blocked',
  'drain-ended',
  'staging-ready',
  'budget-hit',
  'rate-limit-wait',
  'isolation-failed',
  'repo-skipped',
] as const;

export type NotifyEventKind = (typeof NOTIFY_EVENT_KINDS)[number];

/** What `agent-runner notify test` sends: never derived, never listed in `events`. */
export const TEST_EVENT_KIND = 'test';

export function isNotifyEventKind(name: string): name is NotifyEventKind {
  return (NOTIFY_EVENT_KINDS as readonly string[]).includes(name);
}

/** One event as spooled and sent: what happened, to which repo, when, and its dedup key. */
export interface NotifyEvent {
  readonly kind: NotifyEventKind | typeof TEST_EVENT_KIND;
  readonly repo: string;
  /** ISO time the fact was seen. */
  readonly at: string;
  /** Stable across restarts: the same fact always yields the same key, so it is spooled (and sent) once. */
  readonly key: string;
  /** One line for people (the Slack text, the JSON body's summary). */
  readonly summary: string;
  /** The facts behind it, by kind (docs/operations.md, "Notifications"). */
  readonly details: Readonly<Record<string, unknown>>;
}
