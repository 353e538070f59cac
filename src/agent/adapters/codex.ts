// OpenAI Codex (`codex exec`, 0.171) as an agent: argv in, JSONL events out
// (thread.started, turn.started, item.*, turn.completed with usage,
// turn.failed, error). The prompt goes on stdin (`-`). Transient `error`
// events ("Reconnecting... 2/5") are not failures by themselves: only
// turn.failed, a non-zero exit or the watchdog end a session badly. Without
// network codex retries forever and only the watchdog ends it.
// A reviewer runs in codex's read-only sandbox, with the verdict's schema
// (--output-schema, read at start: a missing or non-JSON file fails at once)
// and its last message written to the verdict file (-o).
import type { AgentAdapter, AgentInvocation, AgentOutput, AgentResult, Command } from '../../types.js';
import {
  describeExit,
  isSilent,
  jsonObjects,
  lastStderrLine,
  numberField,
  objectField,
  stringField,
  type JsonObject,
} from './jsonl.js';
import { parseResetTime } from './reset-time.js';
import { reviewFilesOf, roleEnvironment, roleOf } from './role.js';
import { BROKER_SESSION_HEADER, sessionEnvironment, withBrokerWord } from './broker.js';
import { BROKER_TOKEN_VARIABLE } from '../broker-env.js';

const NOT_LOGGED_IN = /not logged in|\blogin\b|\b401\b|unauthori[sz]ed|invalid api key|api key/i;
const RATE_LIMITED = /usage limit|rate limit|too many requests|\b429\b|quota/i;

function buildCommand(invocation: AgentInvocation): Command {
  const args = ['exec', '--json'];
  if (invocation.model) args.push('-m', invocation.model);
  if (invocation.effort) args.push('-c', `model_reasoning_effort=${invocation.effort}`);
  args.push('-s', roleOf(invocation) === 'review' ? 'read-only' : 'workspace-write');
  const review = reviewFilesOf(invocation);
  if (review) args.push('--output-schema', review.schemaFile, '-o', review.verdictFile);
  if (invocation.broker) args.push(...brokerProviderFlags(invocation.broker));
  // Workspaces are git worktrees, so --skip-git-repo-check is not needed.
  args.push('-C', invocation.workspace, '-');
  return {
    program: invocation.binary,
    args,
    // The provider's env_key names the token's variable: root's launcher sets it, so nothing is added here.
    env: sessionEnvironment(invocation, roleEnvironment(invocation), () => ({})),
    cwd: invocation.workspace,
    stdin: invocation.prompt,
    modelSessionOf: invocation.taskId,
  };
}

const BROKER_PROVIDER = 'agent_runner';

/**
 * The broker as codex's model provider, whole on the command line (-c overrides every config file, so nothing in
 * the agent's own ~/.codex changes where it connects): its base_url, the Responses API, the capability read from
 * AGENT_RUNNER_BROKER_TOKEN and sent as a Bearer token, and the session header.
 */
export function brokerProviderFlags(broker: NonNullable<AgentInvocation['broker']>): string[] {
  const provider = `model_providers.${BROKER_PROVIDER}`;
  return [
    `model_provider=${tomlString(BROKER_PROVIDER)}`,
    `${provider}.name=${tomlString('agent-runner broker')}`,
    `${provider}.base_url=${tomlString(`${broker.url}/v1`)}`,
    `${provider}.env_key=${tomlString(BROKER_TOKEN_VARIABLE)}`,
    `${provider}.wire_api=${tomlString('responses')}`,
    `${provider}.http_headers={ ${tomlString(BROKER_SESSION_HEADER)} = ${tomlString(broker.session)} }`,
  ].flatMap((setting) => ['-c', setting]);
}

/** A TOML basic string: JSON's escapes are TOML's for what these values hold (URL and id characters). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

function metrics(events: readonly JsonObject[]): Partial<AgentResult> {
  const sessionId = stringField(
    events.find((event) => event.type === 'thread.started'),
    'thread_id',
  );
  const turns = events.filter((event) => event.type === 'turn.completed');
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  let cachedTokens: number | undefined;
  for (const turn of turns) {
    const usage = objectField(turn, 'usage');
    // input_tokens already counts cached_input_tokens (a subset), unlike Claude's usage.
    const input = numberField(usage, 'input_tokens');
    const output = numberField(usage, 'output_tokens');
    const cached = numberField(usage, 'cached_input_tokens');
    if (input !== undefined) inputTokens = (inputTokens ?? 0) + input;
    if (output !== undefined) outputTokens = (outputTokens ?? 0) + output;
    if (cached !== undefined) cachedTokens = (cachedTokens ?? 0) + cached;
  }
  // For the ledger input excludes cache reads, as Claude reports it; codex says nothing of cache writes.
  const usage = {
    ...(inputTokens !== undefined ? { input: Math.max(0, inputTokens - (cachedTokens ?? 0)) } : {}),
    ...(outputTokens !== undefined ? { output: outputTokens } : {}),
    ...(cachedTokens !== undefined ? { cacheRead: cachedTokens } : {}),
  };
  return {
    ...(Object.keys(usage).length ? { usage } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(turns.length ? { turns: turns.length } : {}),
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
  };
}

/** The message of a turn.failed or error event. */
function messageOf(event: JsonObject): string | undefined {
  return stringField(objectField(event, 'error'), 'message') ?? stringField(event, 'message');
}

function classify(
  message: string,
  endedAt: number | undefined,
  fallback: 'agent-error' | 'crashed',
  prefix = '',
): Pick<AgentResult, 'failure' | 'detail' | 'resetAt'> {
  if (RATE_LIMITED.test(message)) {
    const resetAt = parseResetTime(message, endedAt);
    return { failure: 'rate-limited', detail: message, ...(resetAt ? { resetAt } : {}) };
  }
  if (NOT_LOGGED_IN.test(message)) return { failure: 'not-logged-in', detail: message };
  return { failure: fallback, detail: `${prefix}${message}` };
}

function parseResult(output: AgentOutput): AgentResult {
  const events = jsonObjects(output.stdoutLines);
  const facts = metrics(events);
  const lastFailed = [...events].reverse().find((event) => event.type === 'turn.failed');
  const lastError = [...events].reverse().find((event) => event.type === 'error');
  const lastEvent = [...events]
    .reverse()
    .find((event) => typeof event.type === 'string' && event.type.startsWith('turn.') && event.type !== 'turn.started');
  const watchdog = output.endedBy !== 'exit' ? output.endedBy : undefined;

  if (watchdog) {
    const last = lastError ? messageOf(lastError) : undefined;
    return {
      ok: false,
      failure: watchdog,
      detail: `ended by the ${watchdog} watchdog${last ? `; last error: ${last}` : ''}`,
      ...facts,
    };
  }
  if (lastEvent?.type === 'turn.failed' && lastFailed) {
    return {
      ok: false,
      ...classify(messageOf(lastFailed) ?? 'turn failed without a message', output.endedAt, 'agent-error'),
      ...facts,
    };
  }
  const stderr = lastStderrLine(output.stderrTail);
  if (isSilent(output.stdoutLines)) {
    return {
      ok: false,
      failure: 'no-output',
      detail: `nothing on stdout (${describeExit(output.exitCode, output.signal)})${stderr ? `: ${stderr}` : ''}`,
    };
  }
  if (output.exitCode !== 0 || output.signal) {
    const message = (lastError ? messageOf(lastError) : undefined) ?? stderr;
    const how = describeExit(output.exitCode, output.signal);
    return {
      ok: false,
      ...(message ? classify(message, output.endedAt, 'crashed', `${how}: `) : { failure: 'crashed', detail: how }),
      ...facts,
    };
  }
  if (lastEvent?.type === 'turn.completed') {
    const finalMessage = lastAgentMessage(events);
    return { ok: true, ...facts, ...(finalMessage ? { finalMessage } : {}) };
  }
  return { ok: false, failure: 'agent-error', detail: 'exit 0 without a completed turn', ...facts };
}

export const codexAdapter: AgentAdapter = {
  name: 'codex',
  defaultBinary: 'codex',
  buildCommand,
  // The broker's refusal is the message of codex's turn.failed (the whole error JSON): in the detail.
  parseResult: (output) => withBrokerWord(parseResult(output), output),
};

/** The text of the last `agent_message` item: what the agent said last. */
function lastAgentMessage(events: readonly Record<string, unknown>[]): string | undefined {
  for (const event of [...events].reverse()) {
    const item = event.item as Record<string, unknown> | undefined;
    if (
      event.type === 'item.completed' &&
      item?.type === 'agent_message' &&
      typeof item.text === 'string' &&
      item.text.trim()
    )
      return item.text;
  }
  return undefined;
}
