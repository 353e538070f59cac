// What the scripted agent prints when it poses as Claude Code: the same
// stream-json events claude 2.1.x prints (system init, assistant message,
// result), with deterministic ids and numbers so tests can assert them. Pure.
import { createHash } from 'node:crypto';
import type { ClaudeResultKind } from './instructions.js';

export interface ClaudeArgv {
  readonly model: string | undefined;
  readonly permissionMode: string;
  /** --max-budget-usd: claude stops once the session's cost reaches it. */
  readonly maxBudgetUsd?: number;
  /** --disallowedTools, each name (claude splits its values on commas and spaces). */
  readonly disallowedTools?: readonly string[];
  /** --json-schema, parsed: the session then has claude's StructuredOutput tool. */
  readonly jsonSchema?: Record<string, unknown>;
  /** An argument error claude itself would print, if any. */
  readonly error?: string;
}

/** True when argv is a `claude -p --output-format ...` call. */
export function looksLikeClaudeArgv(argv: readonly string[]): boolean {
  return (
    (argv.includes('-p') || argv.includes('--print')) &&
    argv.some((arg) => arg === '--output-format' || arg.startsWith('--output-format='))
  );
}

function optionValue(argv: readonly string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  if (index >= 0) return argv[index + 1];
  return argv.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
}

export function readClaudeArgv(argv: readonly string[]): ClaudeArgv {
  const format = optionValue(argv, '--output-format');
  const model = optionValue(argv, '--model');
  const permissionMode = argv.includes('--dangerously-skip-permissions')
    ? 'bypassPermissions'
    : (optionValue(argv, '--permission-mode') ?? 'default');
  const budget = optionValue(argv, '--max-budget-usd');
  const maxBudgetUsd = budget === undefined ? undefined : Number(budget);
  const disallowedTools = listValues(argv, ['--disallowedTools', '--disallowed-tools']);
  const schemaText = optionValue(argv, '--json-schema');
  const schema = schemaText === undefined ? undefined : readSchema(schemaText);
  const base = {
    model,
    permissionMode,
    ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}),
    ...(disallowedTools.length ? { disallowedTools } : {}),
    ...(schema && !('error' in schema) ? { jsonSchema: schema.value } : {}),
  };
  if (schema && 'error' in schema) return { ...base, error: schema.error };
  // claude 2.1.197's own check and words (exit 1).
  if (maxBudgetUsd !== undefined && !(maxBudgetUsd > 0))
    return { ...base, error: 'error: --max-budget-usd must be a positive number greater than 0' };
  if (format !== 'stream-json')
    return {
      ...base,
      error: `Error: the scripted agent only speaks --output-format stream-json, not ${format ?? '(none)'}`,
    };
  // claude itself refuses stream-json without --verbose in print mode.
  if (!argv.includes('--verbose'))
    return { ...base, error: 'Error: When using --print, --output-format=stream-json requires --verbose' };
  return base;
}

/** A list option's values: every argument after it up to the next flag, split on commas and spaces. */
function listValues(argv: readonly string[], names: readonly string[]): string[] {
  const values: string[] = [];
  argv.forEach((arg, index) => {
    if (!names.includes(arg)) return;
    for (const value of argv.slice(index + 1)) {
      if (value.startsWith('-')) break;
      values.push(...value.split(/[\s,]+/).filter(Boolean));
    }
  });
  return values;
}

/** claude 2.1.197's own check of --json-schema, with its words. */
function readSchema(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `Error: --json-schema is not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'Error: --json-schema must be a JSON object' };
  return { value: value as Record<string, unknown> };
}

/** The init event's tools: what --disallowedTools names is gone, StructuredOutput comes with --json-schema. */
export function sessionTools(argv: ClaudeArgv | undefined): string[] {
  const denied = new Set(argv?.disallowedTools ?? []);
  const tools = ['Bash', 'Edit', 'Read', 'Write'].filter((tool) => !denied.has(tool));
  return argv?.jsonSchema ? [...tools, 'StructuredOutput'] : tools;
}

/** The task id from the prompt's directive line: `Your task: TASK-3 "Title" (file ...)`. */
export function taskIdFromPrompt(prompt: string): string | undefined {
  return /^Your task: (\S+)/m.exec(prompt)?.[1];
}

/** A stable UUID-shaped session id derived from the task and prompt. */
export function sessionIdFor(taskId: string, prompt: string): string {
  const hex = createHash('sha256').update(`${taskId}\n${prompt}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface SessionFacts {
  readonly sessionId: string;
  readonly cwd: string;
  readonly model: string;
  readonly permissionMode: string;
  /** The init event's tools; absent: Bash, Edit, Read, Write. */
  readonly tools?: readonly string[];
  /** What the session reports of its model's usage when it called one through the broker; absent: usageFor. */
  readonly usage?: SessionUsage;
}

/** The tokens and cost a session reports (input excluding the cache, as claude counts it). */
export interface SessionUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUsd: number;
}

/** The model's answer's usage where there was one, else the figures computed from the prompt. */
export function sessionUsage(facts: Pick<SessionFacts, 'usage'>, prompt: string): SessionUsage {
  return facts.usage ?? { ...usageFor(prompt), cacheWriteTokens: 0 };
}

export function initEvent(facts: SessionFacts): string {
  return JSON.stringify({
    type: 'system',
    subtype: 'init',
    cwd: facts.cwd,
    session_id: facts.sessionId,
    tools: facts.tools ?? ['Bash', 'Edit', 'Read', 'Write'],
    mcp_servers: [],
    model: facts.model,
    permissionMode: facts.permissionMode,
    apiKeySource: 'none',
    claude_code_version: '2.1.197',
  });
}

export function assistantEvent(facts: SessionFacts, text: string, error?: string): string {
  return JSON.stringify({
    type: 'assistant',
    message: {
      id: `msg_${facts.sessionId.slice(0, 8)}`,
      type: 'message',
      role: 'assistant',
      model: facts.model,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 0, output_tokens: 0 },
    },
    parent_tool_use_id: null,
    session_id: facts.sessionId,
    ...(error ? { error } : {}),
  });
}

/** Token counts and cost for a prompt: a pure function of its length. */
export function usageFor(prompt: string): {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  costUsd: number;
} {
  const inputTokens = Math.ceil(prompt.length / 4);
  const outputTokens = 42;
  const cacheReadTokens = 1000;
  // $3 per million input, $15 per million output, $0.30 per million cache reads, rounded to micro-dollars.
  const costUsd = Math.round(inputTokens * 3 + outputTokens * 15 + cacheReadTokens * 0.3) / 1_000_000;
  return { inputTokens, outputTokens, cacheReadTokens, costUsd };
}

/** The reset the scripted agent's rate limits announce: 19:00 UTC after `now` (claude says "resets 7pm (UTC)"). */
export function scriptedResetAt(now: number): number {
  const day = new Date(now);
  const today = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 19);
  return today > now ? today : today + 24 * 3600 * 1000;
}

/**
 * claude 2.1.45+ prints one after each turn; "allowed" is information only,
 * "rejected" means the account is out until resetsAt (epoch seconds).
 */
export function rateLimitEvent(facts: SessionFacts, status: 'allowed' | 'rejected', resetsAt: number): string {
  return JSON.stringify({
    type: 'rate_limit_event',
    rate_limit_info: {
      status,
      resetsAt: Math.floor(resetsAt / 1000),
      rateLimitType: 'five_hour',
      ...(status === 'rejected'
        ? { overageStatus: 'rejected', overageDisabledReason: 'org_level_disabled', isUsingOverage: false }
        : { isUsingOverage: false }),
    },
    uuid: `${facts.sessionId.slice(0, 24)}${status === 'rejected' ? 'aaaaaaaaaaaa' : 'bbbbbbbbbbbb'}`,
    session_id: facts.sessionId,
  });
}

export function successResult(
  facts: SessionFacts,
  prompt: string,
  text: string,
  turns: number,
  costUsd?: number,
  structuredOutput?: unknown,
): string {
  const usage = sessionUsage(facts, prompt);
  return JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    duration_ms: 0,
    duration_api_ms: 0,
    num_turns: turns,
    result: text,
    // Where claude 2.1.x puts what the model gave its StructuredOutput tool (--json-schema).
    ...(structuredOutput !== undefined ? { structured_output: structuredOutput } : {}),
    session_id: facts.sessionId,
    total_cost_usd: costUsd ?? usage.costUsd,
    usage: {
      input_tokens: usage.inputTokens,
      cache_creation_input_tokens: usage.cacheWriteTokens,
      cache_read_input_tokens: usage.cacheReadTokens,
      output_tokens: usage.outputTokens,
    },
  });
}

/** True when claude, told --max-budget-usd, would stop at this cost (it checks after each message). */
export function reachedBudget(costUsd: number, maxBudgetUsd: number | undefined): boolean {
  return maxBudgetUsd !== undefined && costUsd >= maxBudgetUsd;
}

/** claude 2.1.x's result when the session's cost reached --max-budget-usd (shape from the binary's own schema). */
export function budgetResult(
  facts: SessionFacts,
  prompt: string,
  turns: number,
  costUsd: number,
  maxBudgetUsd: number,
): string {
  const usage = sessionUsage(facts, prompt);
  return JSON.stringify({
    type: 'result',
    subtype: 'error_max_budget_usd',
    duration_ms: 0,
    duration_api_ms: 0,
    is_error: true,
    num_turns: turns,
    stop_reason: null,
    session_id: facts.sessionId,
    total_cost_usd: costUsd,
    usage: {
      input_tokens: usage.inputTokens,
      cache_creation_input_tokens: usage.cacheWriteTokens,
      cache_read_input_tokens: usage.cacheReadTokens,
      output_tokens: usage.outputTokens,
    },
    modelUsage: {},
    permission_denials: [],
    errors: [`Reached maximum budget ($${maxBudgetUsd})`],
  });
}

const NO_USAGE = { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };

function errorResult(facts: SessionFacts, fields: Record<string, unknown>): string {
  return JSON.stringify({
    type: 'result',
    duration_ms: 0,
    session_id: facts.sessionId,
    total_cost_usd: 0,
    usage: NO_USAGE,
    ...fields,
  });
}

/**
 * What claude 2.1.197 prints when its model call is answered with an error it does not retry (captured against the
 * broker): an assistant message holding the text, tagged (`authentication_failed` for a 401), and a result with
 * is_error and the status. `status` null: no answer at all (a connection error).
 */
export function apiErrorLines(facts: SessionFacts, text: string, status: number | null, tag?: string): string[] {
  return [
    assistantEvent(facts, text, tag),
    errorResult(facts, { subtype: 'success', is_error: true, api_error_status: status, num_turns: 1, result: text }),
  ];
}

/** The lines claude prints for each canned failure, after init. */
export function failureLines(facts: SessionFacts, kind: ClaudeResultKind): string[] {
  const result = (fields: Record<string, unknown>) => errorResult(facts, fields);
  switch (kind) {
    case 'not-logged-in':
      return [
        assistantEvent(facts, 'Not logged in · Please run /login', 'authentication_failed'),
        result({
          subtype: 'success',
          is_error: true,
          api_error_status: null,
          num_turns: 1,
          result: 'Not logged in · Please run /login',
        }),
      ];
    case 'rate-limited':
      return [
        assistantEvent(facts, "You've hit your limit · resets 7pm (UTC)", 'rate_limit'),
        result({
          subtype: 'success',
          is_error: true,
          api_error_status: 429,
          num_turns: 1,
          result: "You've hit your limit · resets 7pm (UTC)",
        }),
      ];
    case 'max-turns':
      return [result({ subtype: 'error_max_turns', is_error: true, num_turns: 30 })];
  }
}
