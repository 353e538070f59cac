// What the scripted agent reads and prints when it poses as Codex: the argv
// `codex exec --json [-m M] [-c k=v] -s MODE [--output-schema F] [-o F] -C DIR -`
// with codex 0.171's own argument errors, and its JSONL events
// (thread.started, turn.started, item.completed agent_message, turn.completed
// with usage; a usage limit as an error event and turn.failed), with
// deterministic ids and numbers. Pure.
import { sessionIdFor, sessionUsage, type SessionUsage } from './claude-stream.js';

export const CODEX_SANDBOXES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
export type CodexSandbox = (typeof CODEX_SANDBOXES)[number];

export interface CodexArgv {
  readonly model: string | undefined;
  readonly sandbox: CodexSandbox | undefined;
  readonly configs: readonly string[];
  readonly outputSchema: string | undefined;
  readonly outputLastMessage: string | undefined;
  readonly cd: string | undefined;
  /** An argument error codex itself would print (clap exits 2), if any. */
  readonly error?: string;
}

/** True when argv is a `codex exec --json ...` call. */
export function looksLikeCodexArgv(argv: readonly string[]): boolean {
  return argv[0] === 'exec' && argv.includes('--json');
}

const VALUED: Readonly<Record<string, keyof CodexArgv | 'configs'>> = {
  '-m': 'model',
  '--model': 'model',
  '-c': 'configs',
  '--config': 'configs',
  '-s': 'sandbox',
  '--sandbox': 'sandbox',
  '--output-schema': 'outputSchema',
  '-o': 'outputLastMessage',
  '--output-last-message': 'outputLastMessage',
  '-C': 'cd',
  '--cd': 'cd',
};
const FLAGS = new Set(['--json', '--skip-git-repo-check', '--ephemeral']);

export function readCodexArgv(argv: readonly string[]): CodexArgv {
  const values: Record<string, string | undefined> = {};
  const configs: string[] = [];
  const fail = (error: string): CodexArgv => ({ ...read(values, configs), error });
  let prompts = 0;
  for (let at = 1; at < argv.length; at++) {
    const arg = argv[at]!;
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const key = VALUED[name];
    if (key) {
      const value = inline ?? argv[++at];
      if (value === undefined) return fail(`error: a value is required for '${name}' but none was supplied`);
      if (key === 'configs') configs.push(value);
      else values[key] = value;
    } else if (FLAGS.has(arg)) {
      // no value
    } else if (arg === '-' || !arg.startsWith('-')) {
      prompts++;
    } else {
      return fail(`error: unexpected argument '${arg}' found`);
    }
  }
  const sandbox = values.sandbox;
  if (sandbox !== undefined && !CODEX_SANDBOXES.some((mode) => mode === sandbox))
    return fail(
      `error: invalid value '${sandbox}' for '--sandbox <SANDBOX_MODE>'\n  [possible values: ${CODEX_SANDBOXES.join(', ')}]`,
    );
  if (prompts > 1) return fail(`error: unexpected argument '${argv[argv.length - 1]}' found`);
  return read(values, configs);
}

function read(values: Record<string, string | undefined>, configs: readonly string[]): CodexArgv {
  return {
    model: values.model,
    sandbox: values.sandbox as CodexSandbox | undefined,
    configs,
    outputSchema: values.outputSchema,
    outputLastMessage: values.outputLastMessage,
    cd: values.cd,
  };
}

/** codex 0.171's words when the --output-schema file is missing or not JSON (exit 1, before any event). */
export function outputSchemaError(file: string, problem: 'unreadable' | 'not-json', detail: string): string {
  return problem === 'unreadable'
    ? `Failed to read output schema file ${file}: ${detail}`
    : `Output schema file ${file} is not valid JSON: ${detail}`;
}

export function threadStarted(taskId: string, prompt: string): string {
  return JSON.stringify({ type: 'thread.started', thread_id: sessionIdFor(taskId, prompt) });
}

export function turnStarted(): string {
  return JSON.stringify({ type: 'turn.started' });
}

export function agentMessage(index: number, text: string): string {
  return JSON.stringify({ type: 'item.completed', item: { id: `item_${index}`, type: 'agent_message', text } });
}

/** Usage as codex reports it: input_tokens already counts the cached ones. */
export function turnCompleted(prompt: string, answered?: SessionUsage): string {
  const usage = sessionUsage({ usage: answered }, prompt);
  return JSON.stringify({
    type: 'turn.completed',
    usage: {
      input_tokens: usage.inputTokens + usage.cacheReadTokens,
      cached_input_tokens: usage.cacheReadTokens,
      output_tokens: usage.outputTokens,
    },
  });
}

export const CODEX_USAGE_LIMIT =
  "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 hours 5 minutes.";

/** What codex prints after turn.started when the account is out (exit 1). */
export function usageLimitLines(): string[] {
  return [
    JSON.stringify({ type: 'error', message: CODEX_USAGE_LIMIT }),
    JSON.stringify({ type: 'turn.failed', error: { message: CODEX_USAGE_LIMIT } }),
  ];
}

/** What codex 0.171 prints, after turn.started, when its model call ends in an error (exit 1). */
export function turnFailedLines(message: string): string[] {
  return [JSON.stringify({ type: 'error', message }), JSON.stringify({ type: 'turn.failed', error: { message } })];
}

const REASONS: Readonly<Record<number, string>> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/**
 * codex 0.171's words for an error answer (captured against the broker): a 400 is shown as its whole body; any other
 * status, after its five reconnects, as `unexpected status 401 Unauthorized: MESSAGE, url: URL`.
 */
export function codexErrorMessage(status: number, message: string, body: string, url: string): string {
  if (status === 400) return body;
  return `unexpected status ${status}${REASONS[status] ? ` ${REASONS[status]}` : ''}: ${message}, url: ${url}`;
}
