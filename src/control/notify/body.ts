// What a webhook is sent: agent-runner's own JSON, or a Slack-compatible
// body ({"text": …}, which Slack, Mattermost, Rocket.Chat and Discord's
// /slack endpoints take). Pure.
import type { NotifyFormat } from '../../types.js';
import type { NotifyEvent } from './kinds.js';

/** The version of the JSON body's shape; a change that breaks readers raises it. */
export const NOTIFY_BODY_VERSION = 1;

export function notifyBody(event: NotifyEvent, format: NotifyFormat): string {
  if (format === 'slack') return JSON.stringify({ text: `agent-runner · ${event.summary}` });
  return JSON.stringify({
    source: 'agent-runner',
    version: NOTIFY_BODY_VERSION,
    event: event.kind,
    repo: event.repo,
    at: event.at,
    key: event.key,
    summary: event.summary,
    ...event.details,
  });
}
