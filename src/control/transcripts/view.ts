// Transcripts as people read them, pure: which file is a task's newest
// transcript, and each JSONL event as one printable line. The writer already
// redacted secret values (agent/run-task.ts); here every line also loses its
// control characters and escape sequences, because the text is the agent's.
import { printableLine } from '../../printable.js';
import type { TranscriptEntry } from '../repo-view/index.js';

/** The newest transcript of `task` (any task when undefined): the one written last. */
export function pickTranscript(
  entries: readonly TranscriptEntry[],
  task: string | undefined,
): TranscriptEntry | undefined {
  const suffix = task === undefined ? undefined : `-${task.toUpperCase()}.JSONL`;
  const matching = entries.filter((entry) => suffix === undefined || entry.name.toUpperCase().endsWith(suffix));
  let newest: TranscriptEntry | undefined;
  for (const entry of matching)
    if (!newest || entry.mtimeMs > newest.mtimeMs || (entry.mtimeMs === newest.mtimeMs && entry.name > newest.name))
      newest = entry;
  return newest;
}

/** Pure: complete lines of a growing file; the last, unfinished one waits for its newline. */
export function completeLines(text: string): string[] {
  const lines = text.split('\n');
  lines.pop();
  return lines;
}

const str = (value: unknown) =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

/** Pure: one transcript line for a person: "HH:MM:SS what", printable. */
export function describeTranscriptLine(line: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return printableLine(line);
  }
  if (typeof event !== 'object' || event === null) return printableLine(line);
  const time = typeof event.time === 'string' ? event.time.slice(11, 19) : '--:--:--';
  let text: string;
  switch (event.event) {
    case 'run-start':
      text = `run started: ${str(event.assistant)} ${str(event.model)}${event.effort ? ` effort ${str(event.effort)}` : ''}`;
      break;
    case 'session-start':
      text = `session ${str(event.iteration)} started: ${str(event.program)}`;
      break;
    case 'output':
      text = `${event.stream === 'stderr' ? 'err| ' : '   | '}${str(event.line)}`;
      break;
    case 'session-end':
      text = `session ${str(event.iteration)} ended: exit ${str(event.exitCode)}${event.signal ? ` signal ${str(event.signal)}` : ''}${event.endedBy ? ` (${str(event.endedBy)})` : ''}`;
      break;
    case 'run-end':
      text = `run ended: ${str(event.outcome)}`;
      break;
    default:
      text = `${str(event.event)} ${JSON.stringify(event)}`;
  }
  return printableLine(`${time} ${text}`);
}

/** Pure: the last `count` lines of a transcript, each described. */
export function tailTranscript(text: string, count: number): string[] {
  return completeLines(text).slice(-count).map(describeTranscriptLine);
}
