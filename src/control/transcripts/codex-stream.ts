// One line of codex's JSONL (`codex exec --json`) as a person reads it: the
// thread, what the model said and reasoned, each command with its exit and
// trimmed output, file changes, errors (whose message is often the
// provider's JSON, unwrapped here) and each turn's tokens. Pure; an event
// type it does not know comes back undefined so the caller shows it whole.
import { compact, num, record, str, trimmed, type EventText, type TrimLimits } from './display.js';
import type { StreamMemory } from './claude-stream.js';

/** A codex event, by its type. */
export const isCodexEvent = (event: Record<string, unknown>) =>
  /^(thread|turn|item)\./.test(str(event.type)) || event.type === 'error';

/** An error message that is itself the provider's JSON error: its message. */
function errorMessage(value: unknown): string {
  const text = str(record(value)?.message ?? value);
  try {
    const inner = record(record(JSON.parse(text))?.error);
    if (inner && typeof inner.message === 'string')
      return `${inner.message}${inner.code ? ` (${str(inner.code)})` : ''}`;
  } catch {
    // Plain text, as most are.
  }
  return text;
}

function command(item: Record<string, unknown>): EventText {
  return { kind: 'tool', text: `tool shell: ${str(item.command).split('\n')[0]}` };
}

function itemText(item: Record<string, unknown>, phase: string, memory: StreamMemory, limits: TrimLimits): EventText[] {
  const id = str(item.id);
  switch (item.type) {
    case 'agent_message':
      return [{ kind: 'assistant', text: `assistant: ${trimmed(str(item.text), limits.textLines, limits.lineChars)}` }];
    case 'reasoning':
      return [{ kind: 'thinking', text: `thinking: ${trimmed(str(item.text), 3, limits.lineChars)}` }];
    case 'command_execution': {
      if (phase !== 'completed') {
        if (memory.startedItems.has(id)) return [];
        memory.startedItems.add(id);
        return [command(item)];
      }
      const shown = memory.startedItems.delete(id) ? [] : [command(item)];
      const exit = num(item.exit_code);
      const failed = (exit !== undefined && exit !== 0) || item.status === 'failed';
      const output = trimmed(str(item.aggregated_output), limits.resultLines, limits.lineChars);
      return [
        ...shown,
        {
          kind: failed ? 'error' : 'output',
          text: `  shell ${failed ? 'failed' : 'result'} (exit ${exit ?? '?'}): ${output}`,
        },
      ];
    }
    case 'file_change': {
      if (phase !== 'completed') return [];
      const changes = Array.isArray(item.changes) ? item.changes.map((change) => record(change) ?? {}) : [];
      const said = changes.map((change) => `${str(change.path)} (${str(change.kind)})`).join(', ');
      return [{ kind: 'tool', text: `tool edit: ${said || compact(item, limits.lineChars)}` }];
    }
    case 'mcp_tool_call':
      return phase === 'completed'
        ? [{ kind: 'tool', text: `tool ${str(item.server)}.${str(item.tool)}: ${str(item.status)}` }]
        : [];
    case 'web_search':
      return phase === 'completed' ? [{ kind: 'tool', text: `tool web_search: ${str(item.query)}` }] : [];
    case 'todo_list':
      return [{ kind: 'notice', text: `plan: ${Array.isArray(item.items) ? item.items.length : 0} items` }];
    case 'error':
      return [{ kind: 'error', text: `error: ${errorMessage(item.message)}` }];
    default:
      return [{ kind: 'unknown', text: `item ${str(item.type)}: ${compact(item, limits.lineChars)}` }];
  }
}

/** Display text for one codex event, or undefined when its type is not one of codex's. */
export function codexEventText(
  event: Record<string, unknown>,
  memory: StreamMemory,
  limits: TrimLimits,
): EventText[] | undefined {
  const type = str(event.type);
  if (type.startsWith('item.')) return itemText(record(event.item) ?? {}, type.slice(5), memory, limits);
  switch (type) {
    case 'thread.started':
      return [{ kind: 'run', text: `codex session: thread ${str(event.thread_id)}` }];
    case 'turn.started':
      return [{ kind: 'run', text: 'turn started' }];
    case 'turn.completed': {
      const usage = record(event.usage) ?? {};
      return [
        {
          kind: 'usage',
          text: `turn completed: tokens ${num(usage.input_tokens) ?? 0} in (${num(usage.cached_input_tokens) ?? 0} cached), ${num(usage.output_tokens) ?? 0} out`,
        },
      ];
    }
    case 'turn.failed':
      return [{ kind: 'error', text: `turn failed: ${errorMessage(event.error)}` }];
    case 'error':
      return [{ kind: 'error', text: `error: ${errorMessage(event.message)}` }];
    default:
      return undefined;
  }
}
