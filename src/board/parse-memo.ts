// A drain reads the same board many times (the scheduler after every landing,
// each task after its session) and nearly every file is unchanged between
// reads: parsing is pure, so a file whose text is the same as last time gets
// the same result without YAML parsing it again. Keyed by the file's path
// and its whole text, so a changed byte is always parsed afresh. Bounded:
// the oldest entries go first.
import type { Task, UnreadableTask } from '../types.js';
import { parseTaskFile } from './parse.js';

const MAX_ENTRIES = 4096;

const parsed = new Map<string, Task | UnreadableTask>();

/** parseTaskFile, remembered for the exact (file, text) it was given. */
export function parseTaskFileRemembered(file: string, text: string): Task | UnreadableTask {
  const key = `${file}\0${text}`;
  const known = parsed.get(key);
  if (known) return known;
  const result = parseTaskFile(file, text);
  if (parsed.size >= MAX_ENTRIES) parsed.delete(parsed.keys().next().value!);
  parsed.set(key, result);
  return result;
}
