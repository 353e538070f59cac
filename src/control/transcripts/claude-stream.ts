// One line of claude's stream-json (`claude -p --output-format stream-json`)
// as a person reads it: the session's start with its model, what the model
// said, each tool call with its input, each result trimmed, rate limits, and
// the result's turns, tokens and cost. Pure; an event type it does not know
// comes back undefined so the caller shows it whole.
import {
  compact,
  describeToolInput,
  epochTime,
  num,
  record,
  str,
  trimmed,
  type EventText,
  type TrimLimits,
} from './display.js';

/** What one session's later lines need from its earlier ones: a tool result names its call. */
export interface StreamMemory {
  readonly tools: Map<string, string>;
  readonly startedItems: Set<string>;
}

const CLAUDE_TYPES = new Set(['system', 'assistant', 'user', 'result', 'rate_limit_event', 'stream_event']);

/** A claude stream event, by its type. */
export const isClaudeEvent = (event: Record<string, unknown>) => CLAUDE_TYPES.has(str(event.type));

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return compact(content, 2000);
  return content
    .map((part) => {
      const item = record(part);
      return item?.type === 'text' ? str(item.text) : compact(part, 2000);
    })
    .join('\n');
}

function tokens(usage: Record<string, unknown> | undefined): string {
  if (!usage) return 'tokens unknown';
  const input = num(usage.input_tokens) ?? 0;
  const written = num(usage.cache_creation_input_tokens) ?? 0;
  const read = num(usage.cache_read_input_tokens) ?? 0;
  const cache = written || read ? ` (+${written} cache write, ${read} cache read)` : '';
  return `tokens ${input} in${cache}, ${num(usage.output_tokens) ?? 0} out`;
}

function assistant(event: Record<string, unknown>, memory: StreamMemory, limits: TrimLimits): EventText[] {
  const message = record(event.message) ?? {};
  const out: EventText[] = [];
  for (const part of Array.isArray(message.content) ? message.content : []) {
    const item = record(part) ?? {};
    if (item.type === 'text')
      out.push({
        kind: 'assistant',
        text: `assistant: ${trimmed(str(item.text), limits.textLines, limits.lineChars)}`,
      });
    else if (item.type === 'thinking')
      out.push({ kind: 'thinking', text: `thinking: ${trimmed(str(item.thinking), 3, limits.lineChars)}` });
    else if (item.type === 'tool_use') {
      const name = str(item.name);
      if (typeof item.id === 'string') memory.tools.set(item.id, name);
      out.push({ kind: 'tool', text: `tool ${name}: ${describeToolInput(name, item.input)}` });
    } else out.push({ kind: 'unknown', text: `assistant ${str(item.type)}: ${compact(part, limits.lineChars)}` });
  }
  if (event.error !== undefined) out.push({ kind: 'error', text: `error: ${str(event.error)}` });
  return out;
}

function user(event: Record<string, unknown>, memory: StreamMemory, limits: TrimLimits): EventText[] {
  const content = record(event.message)?.content;
  if (!Array.isArray(content))
    return [{ kind: 'notice', text: `user: ${trimmed(contentText(content), limits.resultLines, limits.lineChars)}` }];
  return content.map((part): EventText => {
    const item = record(part) ?? {};
    if (item.type !== 'tool_result')
      return { kind: 'notice', text: `user: ${trimmed(contentText([part]), limits.resultLines, limits.lineChars)}` };
    const tool = memory.tools.get(str(item.tool_use_id)) ?? 'tool';
    const error = item.is_error === true;
    const text = trimmed(contentText(item.content), limits.resultLines, limits.lineChars);
    return { kind: error ? 'error' : 'output', text: `  ${tool} ${error ? 'failed' : 'result'}: ${text}` };
  });
}

function result(event: Record<string, unknown>, limits: TrimLimits): EventText[] {
  const seconds = num(event.duration_ms);
  const cost = num(event.total_cost_usd);
  const error = event.is_error === true;
  const status = event.api_error_status ? `, API status ${str(event.api_error_status)}` : '';
  const out: EventText[] = [
    {
      kind: error ? 'error' : 'usage',
      text: `result: ${str(event.subtype)}${error ? ' (error)' : ''}${status}, ${num(event.num_turns) ?? '?'} turns${seconds === undefined ? '' : `, ${(seconds / 1000).toFixed(1)}s`}; ${tokens(record(event.usage))}; cost ${cost === undefined ? 'unknown' : `$${cost.toFixed(4)}`}`,
    },
  ];
  const said = str(event.result);
  if (error && said) out.push({ kind: 'error', text: `  ${trimmed(said, limits.textLines, limits.lineChars)}` });
  for (const why of Array.isArray(event.errors) ? event.errors : [])
    out.push({ kind: 'error', text: `  ${compact(why, limits.lineChars)}` });
  return out;
}

/** Display text for one claude event, or undefined when its type is not one of claude's. */
export function claudeEventText(
  event: Record<string, unknown>,
  memory: StreamMemory,
  limits: TrimLimits,
): EventText[] | undefined {
  switch (event.type) {
    case 'system':
      if (event.subtype === 'init')
        return [
          {
            kind: 'run',
            text: `claude ${str(event.claude_code_version)} session: model ${str(event.model)}, ${Array.isArray(event.tools) ? event.tools.length : 0} tools, ${str(event.permissionMode)}`,
          },
        ];
      return [{ kind: 'notice', text: `system ${str(event.subtype)}: ${compact(event, limits.lineChars)}` }];
    case 'assistant':
      return assistant(event, memory, limits);
    case 'user':
      return user(event, memory, limits);
    case 'rate_limit_event': {
      const info = record(event.rate_limit_info) ?? {};
      const rejected = info.status === 'rejected';
      return [
        {
          kind: rejected ? 'error' : 'notice',
          text: `rate limit ${str(info.status)} (${str(info.rateLimitType)})${info.resetsAt === undefined ? '' : `, resets ${epochTime(info.resetsAt)}`}`,
        },
      ];
    }
    case 'result':
      return result(event, limits);
    default:
      return undefined;
  }
}
