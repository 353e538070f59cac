// An event as spooled and sent. Its kinds are named once, beside the
// registry's rule that validates `events` lists against them
// (control/registry/notify.ts).
import type { NotifyEventKind } from '../registry/index.js';

export { NOTIFY_EVENT_KINDS, isNotifyEventKind, type NotifyEventKind } from '../registry/index.js';

/** What `agent-runner notify test` sends: never derived, never listed in `events`. */
export const TEST_EVENT_KIND = 'test';

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
