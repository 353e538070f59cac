// A transcript as people read it, pure and incremental: transcript lines (or
// any chunk of the file's text) go in, display lines come out, and feeding a
// file a chunk at a time gives exactly what feeding it whole gives, so `logs
// -f` and the dashboard's log tab render as they read. claude's and codex's
// stream lines become a transcript (claude-stream.ts, codex-stream.ts); a
// command agent's lines and lines that are not JSON are shown as they are; a
// JSON event of a type nobody knows is shown whole, never dropped. Every line
// is redacted (the writer redacted too; capability tokens are caught here
// whatever the writer knew) and made printable: the text is the agent's.
import { printableLine } from '../../printable.js';
import { redactSecrets } from '../../agent/secrets.js';
import { claudeEventText, isClaudeEvent, type StreamMemory } from './claude-stream.js';
import { codexEventText, isCodexEvent } from './codex-stream.js';
import {
  compact,
  DEFAULT_LIMITS,
  num,
  record,
  str,
  type DisplayLine,
  type EventText,
  type TrimLimits,
} from './display.js';

export type { DisplayLine, LineKind, TrimLimits } from './display.js';

export interface RenderOptions {
  /** Values to redact besides capability tokens (the home's credentials, when the caller knows them). */
  readonly secrets?: readonly string[];
  readonly limits?: TrimLimits;
}

/** The streams the renderer reads as a transcript; any other assistant's output is shown as it is. */
const STREAM_ASSISTANTS = new Set(['claude', 'codex']);
/** Continuation lines line up under the text after "HH:MM:SS ". */
const INDENT = ' '.repeat(9);

function runStart(event: Record<string, unknown>): EventText {
  const model = event.model ? ` ${str(event.model)}` : '';
  const effort = event.effort ? ` effort ${str(event.effort)}` : '';
  const sources = [
    event.modelSource ? `model from ${str(event.modelSource)}` : '',
    event.effortSource && event.effort ? `effort from ${str(event.effortSource)}` : '',
  ].filter(Boolean);
  const role = event.role && event.role !== 'implement' ? ` (${str(event.role)})` : '';
  return {
    kind: 'run',
    text: `run started${role}: ${str(event.assistant)}${model}${effort}${sources.length ? ` (${sources.join(', ')})` : ''}`,
  };
}

function sessionEnd(event: Record<string, unknown>): EventText[] {
  const result = record(event.result) ?? {};
  const how = `exit ${str(event.exitCode)}${event.signal ? ` signal ${str(event.signal)}` : ''}${event.endedBy ? ` (${str(event.endedBy)})` : ''}`;
  const input = num(result.inputTokens);
  const output = num(result.outputTokens);
  const cost = num(result.costUsd);
  const usage = `tokens ${input ?? '?'} in, ${output ?? '?'} out; cost ${cost === undefined ? 'unknown' : `$${cost.toFixed(4)}`}`;
  const failure = result.ok === false ? `failed${result.failure ? ` (${str(result.failure)})` : ''}` : 'ok';
  const out: EventText[] = [
    {
      kind: result.ok === false ? 'error' : 'usage',
      text: `session ${str(event.iteration)} ended: ${how}, ${failure}; ${usage}`,
    },
  ];
  if (result.ok === false && result.detail) out.push({ kind: 'error', text: `  ${str(result.detail)}` });
  return out;
}

function runEnd(event: Record<string, unknown>): EventText {
  const outcome = record(event.outcome);
  const kind = outcome ? str(outcome.kind) : str(event.outcome);
  const reason = outcome?.reason ? `: ${str(outcome.reason)}` : '';
  return { kind: kind === 'done' ? 'run' : kind ? 'error' : 'run', text: `run ended: ${kind}${reason}` };
}

export class TranscriptRenderer {
  private assistant: string | undefined;
  private memory: StreamMemory = { tools: new Map(), startedItems: new Set() };
  private partial = '';
  private readonly secrets: readonly string[];
  private readonly limits: TrimLimits;

  constructor(options: RenderOptions = {}) {
    this.secrets = options.secrets ?? [];
    this.limits = options.limits ?? DEFAULT_LIMITS;
  }

  /** Any chunk of the file's text; an unfinished last line waits for the chunk that ends it. */
  text(chunk: string): DisplayLine[] {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    return this.lines(lines);
  }

  /** Complete transcript lines, without their newlines. */
  lines(lines: readonly string[]): DisplayLine[] {
    return lines.flatMap((line) => this.line(line));
  }

  private line(line: string): DisplayLine[] {
    let event: Record<string, unknown> | undefined;
    try {
      event = record(JSON.parse(line));
    } catch {
      event = undefined;
    }
    // Not JSON at all: as it is, with no time to show.
    if (!event) return this.display('', [{ kind: 'raw', text: line }]);
    const time = typeof event.time === 'string' && event.time.length >= 19 ? event.time.slice(11, 19) : '--:--:--';
    return this.display(time, this.envelope(event));
  }

  private envelope(event: Record<string, unknown>): EventText[] {
    switch (event.event) {
      case 'run-start':
        this.assistant = str(event.assistant);
        return [runStart(event)];
      case 'session-start':
        this.memory = { tools: new Map(), startedItems: new Set() };
        return [{ kind: 'run', text: `session ${str(event.iteration)} started: ${str(event.program)}` }];
      case 'output':
        return this.output(event);
      case 'session-end':
        return sessionEnd(event);
      case 'session-again':
        return [{ kind: 'notice', text: `session ${str(event.iteration)} again: ${str(event.reason)}` }];
      case 'run-end':
        return [runEnd(event)];
      default:
        return [
          { kind: 'unknown', text: `${str(event.event) || 'event'} ${compact(event, this.limits.lineChars * 4)}` },
        ];
    }
  }

  private output(event: Record<string, unknown>): EventText[] {
    const line = str(event.line);
    if (event.stream === 'stderr') return [{ kind: 'error', text: `err| ${line}` }];
    const inner = this.streamEvent(line);
    if (!inner) return [{ kind: 'raw', text: `   | ${line}` }];
    const claude = this.assistant !== 'codex' && isClaudeEvent(inner);
    const said = claude
      ? claudeEventText(inner, this.memory, this.limits)
      : isCodexEvent(inner)
        ? codexEventText(inner, this.memory, this.limits)
        : undefined;
    return (
      said ?? [{ kind: 'unknown', text: `${str(inner.type) || 'event'}: ${compact(inner, this.limits.lineChars * 4)}` }]
    );
  }

  /** An output line read as a stream event: only for claude and codex (or before the run says which). */
  private streamEvent(line: string): Record<string, unknown> | undefined {
    if (this.assistant !== undefined && !STREAM_ASSISTANTS.has(this.assistant)) return undefined;
    if (!line.startsWith('{')) return undefined;
    try {
      const inner = record(JSON.parse(line));
      return inner && typeof inner.type === 'string' ? inner : undefined;
    } catch {
      return undefined;
    }
  }

  private display(time: string, texts: readonly EventText[]): DisplayLine[] {
    const out: DisplayLine[] = [];
    texts.forEach((item, i) => {
      redactSecrets(item.text, this.secrets)
        .split('\n')
        .forEach((text, j) => {
          const head = !time ? '' : i === 0 && j === 0 ? `${time} ` : INDENT;
          out.push({ kind: item.kind, text: printableLine(`${head}${j > 0 ? '  ' : ''}${text}`) });
        });
    });
    return out;
  }
}

/** A whole transcript's text, rendered. */
export function renderTranscript(text: string, options: RenderOptions = {}): DisplayLine[] {
  return new TranscriptRenderer(options).text(text);
}
