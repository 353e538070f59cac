// The pieces every transcript renderer shares, pure: a display line and its
// kind (the dashboard picks a colour from it, `logs` prints the text), text
// trimmed with a visible marker, a tool call's input said in a few words,
// and a value short enough for one line.

/** What a display line is; the terminal layer picks the colour. */
export type LineKind =
  | 'run' // a run or session starting or ending
  | 'assistant' // what the model said
  | 'thinking'
  | 'tool' // a tool call and its input
  | 'output' // a tool's result
  | 'error'
  | 'usage' // tokens and cost
  | 'notice' // a rate limit, a system message
  | 'raw' // a line that is not a known stream event, shown as it is
  | 'unknown'; // a JSON event of a type the renderer does not know, shown whole

export interface DisplayLine {
  readonly kind: LineKind;
  readonly text: string;
}

/** An event as several lines before the time and redaction go on. */
export interface EventText {
  readonly kind: LineKind;
  /** May hold newlines; each becomes its own display line. */
  readonly text: string;
}

export interface TrimLimits {
  /** A tool's result: at most this many lines. */
  readonly resultLines: number;
  /** What the model says: at most this many lines. */
  readonly textLines: number;
  /** Any one line: at most this many characters. */
  readonly lineChars: number;
}

export const DEFAULT_LIMITS: TrimLimits = { resultLines: 6, textLines: 40, lineChars: 400 };

/** The text cut to `maxLines` lines of at most `maxChars`, with a marker saying what was cut. */
export function trimmed(text: string, maxLines: number, maxChars: number): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  const kept = lines.slice(0, maxLines);
  let cutChars = 0;
  const shown = kept.map((line) => {
    if (line.length <= maxChars) return line;
    cutChars += line.length - maxChars;
    return `${line.slice(0, maxChars)}...`;
  });
  const moreLines = lines.length - kept.length;
  const hidden = lines.slice(maxLines).join('\n').length + cutChars;
  if (!moreLines && !cutChars) return shown.join('\n');
  const what = moreLines ? `${moreLines} more line${moreLines === 1 ? '' : 's'}, ` : '';
  return `${shown.join('\n')}\n[trimmed: ${what}${hidden} chars not shown; --raw has them]`;
}

export const str = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

export const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export const record = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** A JSON value on one line, cut to `max` characters. */
export function compact(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}

const lineCount = (text: unknown) => (typeof text === 'string' && text ? text.split('\n').length : 0);

/** The first line of a command, and how many more it has. */
function firstLine(text: string): string {
  const lines = text.split('\n');
  return lines.length > 1 ? `${lines[0]} (+${lines.length - 1} lines)` : text;
}

/** A tool call's input in a few words: the command, the path, an edit's size. */
export function describeToolInput(name: string, input: unknown): string {
  const args = record(input) ?? {};
  const path = str(args.file_path ?? args.notebook_path ?? args.path);
  switch (name) {
    case 'Bash':
    case 'shell':
      return firstLine(str(args.command));
    case 'Read':
      return path;
    case 'Write':
      return `${path} (${lineCount(args.content)} lines)`;
    case 'Edit':
      return `${path} (-${lineCount(args.old_string)} +${lineCount(args.new_string)} lines${args.replace_all === true ? ', every match' : ''})`;
    case 'MultiEdit':
      return `${path} (${Array.isArray(args.edits) ? args.edits.length : 0} edits)`;
    case 'NotebookEdit':
      return `${path} (${str(args.edit_mode) || 'replace'} a cell)`;
    case 'Glob':
    case 'Grep':
      return `${str(args.pattern)}${path ? ` in ${path}` : ''}`;
    case 'WebFetch':
      return str(args.url);
    case 'WebSearch':
      return str(args.query);
    case 'Task':
      return str(args.description) || compact(args, 200);
    case 'TodoWrite':
      return `${Array.isArray(args.todos) ? args.todos.length : 0} todos`;
    default:
      return compact(input ?? {}, 200);
  }
}

/** Seconds since the epoch as an ISO time, or the value as it came. */
export function epochTime(value: unknown): string {
  const seconds = num(value);
  return seconds === undefined ? str(value) : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
