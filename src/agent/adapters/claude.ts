// Claude Code (`claude -p`, 2.1.x) as an agent: argv in, stream-json out.
// The prompt goes on stdin so it never shows in `ps` or in argv limits.
// Permission mode: unattended means nobody can approve a tool call, and
// anything short of bypass stalls on the first Bash command (gates, git
// commit). The containment is the repo user and the egress lock around the
// process, not Claude's prompts. Claude refuses this mode as root, which
// agents never are here.
// A reviewer gets a second line of its own: --disallowedTools takes claude's
// write tools out of the session (the init event's `tools` no longer name
// them, bypass or not), and --json-schema brings its verdict back as the
// result's `structured_output`. Bash stays, so a reviewer can run the tests,
// and can still write through it: the runner's check of the tree and refs
// afterwards is the guarantee, not this.
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

/** The tools that write files, as claude 2.1.197 names them: its own read-only Explore agent is denied these too. */
export const CLAUDE_WRITE_TOOLS: readonly string[] = ['Edit', 'Write', 'NotebookEdit'];

const NOT_LOGGED_IN =
  /not logged in|please run \/login|invalid api key|authentication_failed|oauth token (?:has )?expired|credit balance is too low/i;
/** claude's own words when started as root with --dangerously-skip-permissions. */
const AS_ROOT = /cannot be used with root\/sudo privileges/i;
const ROOT_REMEDY =
  "claude never runs as root: run it as the repo's user (agent-runner dispatch REPO, or run/orchestrate as a non-root user that owns the checkout)";
const RATE_LIMITED = /usage limit|hit your limit|limit reached|rate[_ ]limit|too many requests|\b429\b|overloaded/i;

function buildCommand(invocation: AgentInvocation): Command {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'];
  // --disallowedTools takes a list: one comma-separated value, so the flag after it is not swallowed.
  if (roleOf(invocation) === 'review') args.push('--disallowedTools', CLAUDE_WRITE_TOOLS.join(','));
  const review = reviewFilesOf(invocation);
  if (review) args.push('--json-schema', review.schemaText);
  if (invocation.model) args.push('--model', invocation.model);
  if (invocation.effort) args.push('--effort', invocation.effort);
  // claude ends the session itself once its cost reaches this (checked after each message), with an
  // error_max_budget_usd result.
  if (invocation.maxBudgetUsd !== undefined && invocation.maxBudgetUsd > 0)
    args.push('--max-budget-usd', String(invocation.maxBudgetUsd));
  return {
    program: invocation.binary,
    args,
    env: sessionEnvironment(invocation, roleEnvironment(invocation), (broker) => ({
      ANTHROPIC_BASE_URL: broker.url,
      ANTHROPIC_CUSTOM_HEADERS: `${BROKER_SESSION_HEADER}: ${broker.session}`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    })),
    cwd: invocation.workspace,
    stdin: invocation.prompt,
    modelSessionOf: invocation.taskId,
  };
}

/** Session facts every outcome carries when the stream had them. */
function metrics(events: readonly JsonObject[], result: JsonObject | undefined): Partial<AgentResult> {
  const init = events.find((event) => event.type === 'system' && event.subtype === 'init');
  const usage = objectField(result, 'usage');
  const sessionId = stringField(result, 'session_id') ?? stringField(init, 'session_id');
  const turns = numberField(result, 'num_turns');
  // Cache reads and writes are input the model processed too; usage.input_tokens alone leaves them out.
  const inputParts = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'].map((key) =>
    numberField(usage, key),
  );
  const inputTokens = inputParts.some((part) => part !== undefined)
    ? inputParts.reduce<number>((sum, part) => sum + (part ?? 0), 0)
    : undefined;
  const outputTokens = numberField(usage, 'output_tokens');
  const costUsd = numberField(result, 'total_cost_usd');
  const usageParts = {
    input: numberField(usage, 'input_tokens'),
    output: outputTokens,
    cacheRead: numberField(usage, 'cache_read_input_tokens'),
    cacheWrite: numberField(usage, 'cache_creation_input_tokens'),
  };
  const reported = Object.fromEntries(Object.entries(usageParts).filter(([, value]) => value !== undefined));
  const model = stringField(init, 'model');
  const rateLimitSeen = rejectedRateLimit(events);
  return {
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(Object.keys(reported).length ? { usage: reported } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(rateLimitSeen ? { rateLimitSeen } : {}),
    ...(turns !== undefined ? { turns } : {}),
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/**
 * A `rate_limit_event` whose status is "rejected" (claude 2.1.45+ prints one
 * after each turn; "allowed" and "allowed_warning" are information only).
 * `resetsAt` is epoch seconds.
 */
function rejectedRateLimit(events: readonly JsonObject[]): { resetAt?: string } | undefined {
  const rejected = [...events]
    .reverse()
    .find(
      (event) =>
        event.type === 'rate_limit_event' &&
        stringField(objectField(event, 'rate_limit_info'), 'status') === 'rejected',
    );
  if (!rejected) return undefined;
  const resetsAt = numberField(objectField(rejected, 'rate_limit_info'), 'resetsAt');
  return resetsAt !== undefined && resetsAt > 0 ? { resetAt: new Date(resetsAt * 1000).toISOString() } : {};
}

/** The error an assistant message was tagged with (e.g. "authentication_failed", "rate_limit"). */
function assistantErrors(events: readonly JsonObject[]): string[] {
  return events
    .filter((event) => event.type === 'assistant')
    .map((event) => stringField(event, 'error'))
    .filter((error): error is string => Boolean(error));
}

function classifyError(
  message: string,
  tags: readonly string[],
  result: JsonObject,
  endedAt: number | undefined,
  seen: AgentResult['rateLimitSeen'],
): Pick<AgentResult, 'failure' | 'detail' | 'resetAt'> {
  const text = [message, ...tags].join(' ');
  if (NOT_LOGGED_IN.test(text)) return { failure: 'not-logged-in', detail: message };
  if (RATE_LIMITED.test(text) || numberField(result, 'api_error_status') === 429 || seen) {
    const resetAt = parseResetTime(message, endedAt) ?? seen?.resetAt;
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
      // Whatever it holds: checking it is the review stage's job, the adapter only carries it.
      const structured = result.structured_output;
      return {
        ok: true,
        ...facts,
        ...(finalMessage ? { finalMessage } : {}),
        ...(structured !== undefined ? { structuredOutput: JSON.stringify(structured) } : {}),
        ...(watchdog ? { detail: `ended by ${watchdog} after its result line` } : {}),
      };
    }
    // claude's --max-budget-usd was reached: its cost is in the result like any other's.
    if (subtype === 'error_max_budget_usd')
      return {
        ok: false,
        failure: 'over-budget',
        detail: `stopped at its budget: ${budgetMessage(result)} (error_max_budget_usd)`,
        ...facts,
      };
    if (subtype === 'error_max_turns')
      return {
        ok: false,
        failure: 'max-turns',
        detail: `stopped after ${facts.turns ?? '?'} turns (error_max_turns)`,
        ...facts,
      };
    const message =
      stringField(result, 'result') ??
      (errorStrings(result).join('; ') || `result ${subtype ?? 'without subtype'} with is_error`);
    return {
      ok: false,
      ...classifyError(message, assistantErrors(events), result, output.endedAt, facts.rateLimitSeen),
      ...facts,
    };
  }
  if (output.endedBy === 'over-budget')
    return {
      ok: false,
      failure: 'over-budget',
      detail: 'the runner ended it: its reported cost passed its budget',
      ...facts,
    };
  // The stream said the account is limited and no result came: that is why.
  if (facts.rateLimitSeen) {
    return {
      ok: false,
      failure: 'rate-limited',
      detail: 'rate_limit_event rejected, no result line',
      ...(facts.rateLimitSeen.resetAt ? { resetAt: facts.rateLimitSeen.resetAt } : {}),
      ...facts,
    };
  }

  if (watchdog)
    return {
      ok: false,
      failure: watchdog,
      detail: `no result line before the ${watchdog} watchdog ended it`,
      ...facts,
    };
  const stderr = lastStderrLine(output.stderrTail);
  const suffix = stderr ? `: ${stderr}` : '';
  // Claude refuses bypass mode as root: say what to do instead of only quoting it.
  const remedy = stderr && AS_ROOT.test(stderr) ? `; ${ROOT_REMEDY}` : '';
  // Nothing at all on stdout, whatever the exit: claude failed before its first event.
  if (isSilent(output.stdoutLines))
    return {
      ok: false,
      failure: 'no-output',
      detail: `nothing on stdout (${describeExit(output.exitCode, output.signal)})${suffix}${remedy}`,
    };
  return {
    ok: false,
    failure: 'crashed',
    detail: `${describeExit(output.exitCode, output.signal)} without a result line${suffix}`,
    ...facts,
  };
}

/** The result line's `errors`, those that are text. */
function errorStrings(result: JsonObject): string[] {
  return Array.isArray(result.errors)
    ? result.errors.filter((error): error is string => typeof error === 'string')
    : [];
}

/** claude's own words, e.g. "Reached maximum budget ($0.5)". */
function budgetMessage(result: JsonObject): string {
  return errorStrings(result).join('; ') || `$${numberField(result, 'total_cost_usd') ?? '?'} spent`;
}

/**
 * The cost a stream line reports: claude 2.1.x puts total_cost_usd only in
 * its result line (assistant messages carry tokens, never dollars), so the
 * runner learns the cost when the session is all but over.
 */
function costReported(line: string): number | undefined {
  if (!line.includes('"result"') || !line.includes('total_cost_usd')) return undefined;
  const [event] = jsonObjects([line]);
  return event?.type === 'result' ? numberField(event, 'total_cost_usd') : undefined;
}

export const claudeAdapter: AgentAdapter = {
  name: 'claude',
  defaultBinary: 'claude',
  buildCommand,
  // The broker refusal is claude's result text ("API Error: 400 agent-runner broker: over budget: ..."): the detail.
  parseResult: (output) => withBrokerWord(parseResult(output), output),
  costReported,
};
