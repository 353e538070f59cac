// What every adapter does the same way when the run has a provider broker: the session's environment without any
// login (the broker holds the key; root's launcher adds the capability), the session id the broker records each
// response under, and the broker's own word on how a session ended: its over-budget refusal, which each CLI shows
// in its own way but always with OVER_BUDGET_MESSAGE_PREFIX in it, and the reset time of a 429 it recorded, which
// is better than any the CLI's text gives. Pure.
import type { AgentInvocation, AgentOutput, AgentResult } from '../../types.js';
import { OVER_BUDGET_MESSAGE_PREFIX } from '../../broker/providers.js';
import { withoutProviderLogins } from '../broker-env.js';
import { SESSION_HEADER } from '../../broker/headers.js';

/** The header the broker reads the session id from, as each CLI's setting names it. */
export const BROKER_SESSION_HEADER = SESSION_HEADER;
export { BROKER_SESSION_VARIABLE } from '../broker-env.js';

/** What the broker takes as a session id (headers.ts SESSION_SHAPE): anything else it records as no session. */
const SESSION_CHARS = /[^A-Za-z0-9._:-]/g;
const SESSION_MAX = 128;

/**
 * The X-Agent-Runner-Session value of one session: run, task, role and the session's number, joined by ':' (the
 * broker takes letters, digits and . _ : - only, at most 128). Informational: the grant, not this, names the task.
 */
export function brokerSessionId(runId: string, taskId: string, role: string, n: number | string): string {
  return [runId, taskId, role, String(n)].join(':').replace(SESSION_CHARS, '-').slice(0, SESSION_MAX);
}

/**
 * The session's environment: as asked, and with a broker the CLI's broker variables over it and no provider login
 * (a login beside the capability would be used before it, or leak).
 */
export function sessionEnvironment(
  invocation: AgentInvocation,
  own: Readonly<Record<string, string>>,
  brokerVariables: (broker: NonNullable<AgentInvocation['broker']>) => Record<string, string>,
): Record<string, string> {
  if (!invocation.broker) return { ...invocation.env, ...own };
  return withoutProviderLogins({ ...invocation.env, ...own, ...brokerVariables(invocation.broker) });
}

/**
 * The broker's over-budget reason in a CLI's error text: what follows OVER_BUDGET_MESSAGE_PREFIX (its last
 * occurrence), to the end of the line, or of the JSON string it is in, however deep (codex's turn.failed quotes the
 * whole error JSON, and its stdout line quotes that again); undefined when the text holds no refusal.
 */
export function overBudgetReason(text: string): string | undefined {
  const at = text.lastIndexOf(OVER_BUDGET_MESSAGE_PREFIX);
  if (at < 0) return undefined;
  let reason = text.slice(at + OVER_BUDGET_MESSAGE_PREFIX.length);
  // Each JSON layer the message sits in: its string ends at the first unescaped quote, and its escapes are undone.
  for (let layer = jsonDepth(text.slice(0, at)); layer > 0; layer--) {
    const quoted = /^((?:[^"\\]|\\.)*)"/.exec(reason);
    reason = unescapeJson(quoted ? quoted[1]! : reason);
  }
  return reason.split('\n')[0]!.trim() || 'no reason given';
}

/** How many JSON strings deep the text after `before` is: 0 unless it opens right after a quote. */
function jsonDepth(before: string): number {
  if (!before.endsWith('"')) return 0;
  // A quote escaped n times has 2^(depth-1) - 1 backslashes before it: 0, 1, 3, 7.
  const backslashes = /\\*$/.exec(before.slice(0, -1))![0].length;
  let depth = 1;
  for (let left = backslashes; left > 0 && depth < MAX_JSON_DEPTH; left = (left - 1) / 2) depth++;
  return depth;
}

const MAX_JSON_DEPTH = 4;

function unescapeJson(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}

/**
 * A session's result with the broker's word on it: a failed session whose error text holds the broker's refusal is
 * over-budget (the task parks, no attempt charged); a 429 the broker recorded during the session (the exit's
 * rateLimitResetAt) makes any other failure rate-limited, its reset the broker's. `errorTexts` are where the CLI
 * shows an error (its result or turn.failed text is already in the detail). A session that ended well is left as
 * it is: the CLI got past the 429.
 */
export function withBrokerWord(
  result: AgentResult,
  output: AgentOutput,
  errorTexts: readonly string[] = [],
): AgentResult {
  if (result.ok) return result;
  for (const text of [result.detail ?? '', ...errorTexts]) {
    const reason = overBudgetReason(text);
    if (reason !== undefined) return { ...result, failure: 'over-budget', detail: reason, brokerOverBudget: reason };
  }
  const resetAt = output.rateLimitResetAt;
  if (resetAt === undefined || result.failure === 'over-budget') return result;
  if (result.failure === 'rate-limited') return { ...result, resetAt };
  return {
    ...result,
    failure: 'rate-limited',
    detail: `the provider rate limited the session until ${resetAt} (the broker's record of a 429)${result.detail ? `; the CLI said: ${result.detail}` : ''}`,
    resetAt,
  };
}
