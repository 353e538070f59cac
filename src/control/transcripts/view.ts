// Which file is a task's newest transcript, and its complete lines, pure.
// How its events read for people is render.ts.
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
