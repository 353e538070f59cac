// Claude Code (`claude -p`, 2.1.x) as an agent: argv in, stream-json out.
// The prompt goes on stdin so it never shows in `ps` or in argv limits.
// Permission mode: unattended means nobody can approve a tool call, and
// anything short of bypass stalls on the first Bash command (gates, git
// commit). The containment is the repo user and the egress lock around the
// process, not Claude's prompts. Claude refuses this mode as root, which
// agents never are here.
import type { AgentAdapter, AgentInvocation, AgentOutput, AgentResult, Command } from '../../types.js';
import { describeExit, isSilent, jsonObjects, lastStderrLine, numberField, objectField, stringField, type JsonObject } from './jsonl.js';
import { parseResetTime } from './reset-time.js';

const NOT_LOGGED_IN = /not logged in|please run \/login|invalid api key|authentication_failed|oauth token (?:has )?expired|credit balance is too low/i;
const RATE_LIMITED = /usage limit|hit your limit|limit reached|rate[_ ]limit|too many requests|\b429\b|overloaded/i;

function buildCommand(invocation: AgentInvocation): Command {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
  if (invocation.model) args.push('--model', invocation.model);
  if (invocation.effort) args.push('--effort', invocation.effort);
  return { program: invocation.binary, args, env: { ...invocation.env }, cwd: invocation.workspace, stdin: invocation.prompt };
}

/** Session facts every outcome carries when the stream had them. */
function metrics(events: readonly JsonObject[], result: JsonObject | undefined): Partial<AgentResult> {
  const init = events.find((event) => event.type === 'system' && event.subtype === 'init');
  const usage = objectField(result, 'usage');
  const sessionId = stringField(result, 'session_id') ?? stringField(init, 'session_id');
  const turns = numberField(result, 'num_turns');
  // Cache reads and writes are input the model processed too; usage.input_tokens alone leaves them out.
  const inputParts = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'].map((key) => numberField(usage, key));
  const inputTokens = inputParts.some((part) => part !== undefined) ? inputParts.reduce<number>((sum, part) => sum + (part ?? 0), 0) : undefined;
  const outputTokens = numberField(usage, 'output_tokens');
  const costUsd = numberField(result, 'total_cost_usd');
  return {
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(turns !== undefined ? { turns } : {}),
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/** The error an assistant message was tagged with (e.g. "authentication_failed", "rate_limit"). */
function assistantErrors(events: readonly JsonObject[]): string[] {
  return events.filter((event) => event.type === 'assistant').map((event) => stringField(event, 'error')).filter((error): error is string => Boolean(error));
}

function classifyError(message: string, tags: readonly string[], result: JsonObject, endedAt: number | undefined): Pick<AgentResult, 'failure' | 'detail' | 'resetAt'> {
  const text = [message, ...tags].join(' ');
  if (NOT_LOGGED_IN.test(text)) return { failure: 'not-logged-in', detail: message };
  if (RATE_LIMITED.test(text) || numberField(result, 'api_error_status') === 429) {
    const resetAt = parseResetTime(message, endedAt);
    return { failure: 'rate-limited', detail: message, ...(resetAt ? { resetAt } : {}) };
  }
  return { failure: 'agent-error', detail: message };
}

function parseResult(output: AgentOutput): AgentResult {
  const events = jsonObjects(output.stdoutLines);
  const result = [...events].reverse().find((event) => event.type === 'result');
  const facts = metrics(events, result);
  const watchdog = output.endedBy !== 'exit' ? output.endedBy : undefined;

  if (result) {
    const subtype = stringField(result, 'subtype');
    const isError = result.is_error === true;
    // subtype says "success" even for a login failure: is_error decides.
    if (subtype === 'success' && !isError) {
      // Claude sometimes lingers after its result line; the work is reported done, so the kill does not undo it.
      const finalMessage = stringField(result, 'result');
      return { ok: true, ...facts, ...(finalMessage ? { finalMessage } : {}), ...(watchdog ? { detail: `ended by ${watchdog} after its result line` } : {}) };
    }
    if (subtype === 'error_max_turns') return { ok: false, failure: 'max-turns', detail: `stopped after ${facts.turns ?? '?'} turns (error_max_turns)`, ...facts };
    const errors = Array.isArray(result.errors) ? result.errors.filter((error): error is string => typeof error === 'string') : [];
    const message = stringField(result, 'result') ?? (errors.join('; ') || `result ${subtype ?? 'without subtype'} with is_error`);
    return { ok: false, ...classifyError(message, assistantErrors(events), result, output.endedAt), ...facts };
  }

  if (watchdog) return { ok: false, failure: watchdog, detail: `no result line before the ${watchdog} watchdog ended it`, ...facts };
  const stderr = lastStderrLine(output.stderrTail);
  const suffix = stderr ? `: ${stderr}` : '';
  // Nothing at all on stdout, whatever the exit: claude failed before its first event.
  if (isSilent(output.stdoutLines)) return { ok: false, failure: 'no-output', detail: `nothing on stdout (${describeExit(output.exitCode, output.signal)})${suffix}` };
  return { ok: false, failure: 'crashed', detail: `${describeExit(output.exitCode, output.signal)} without a result line${suffix}`, ...facts };
}

export const claudeAdapter: AgentAdapter = {
  name: 'claude',
  defaultBinary: 'claude',
  buildCommand,
  parseResult,
};
