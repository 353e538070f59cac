// A drain reads the same board many times (the scheduler after every landing,
// each task after its session) and nearly every file is unchanged between
// reads: parsing is pure, so a file whose text is the same as last time gets
// the same result without YAML parsing it again. Keyed by the file's path
// and its whole text, so a changed byte is always parsed afresh. Bounded in
// entries and in bytes (a long-lived watcher reads many repos, and a task
// file may be up to 1 MiB): the oldest entries go first, and a text too big
// to be worth keeping is parsed every time.
import type { Task, UnreadableTask } from '../types.js';
import { parseTaskFile } from './parse.js';

const MAX_ENTRIES = 4096;
/** Characters of keys (path and text) kept in all. */
const MAX_CHARS = 8 * 1024 * 1024;
/** A text longer than this is not kept. */
const MAX_KEPT_TEXT = 64 * 1024;

const parsed = new Map<string, Task | UnreadableTask>();
let chars = 0;

/** parseTaskFile, remembered for the exact (file, text) it was given. */
export function parseTaskFileRemembered(file: string, text: string): Task | UnreadableTask {
  if (text.length > MAX_KEPT_TEXT) return parseTaskFile(file, text);
  const key = `${file}\0${text}`;
  const known = parsed.get(key);
  if (known) return known;
  const result = parseTaskFile(file, text);
  parsed.set(key, result);
  chars += key.length;
  while (parsed.size > MAX_ENTRIES || chars > MAX_CHARS) {
    const oldest = parsed.keys().next().value!;
    parsed.delete(oldest);
    chars -= oldest.length;
  }
  return result;
}
