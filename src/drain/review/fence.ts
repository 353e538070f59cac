// Text from elsewhere put into a prompt: in a fence it cannot close, with no
// line that reads as one of the prompt's machine lines, and cut to a size.
// Pure.

/** Lines a prompt's reader takes as the runner's: the review's machine lines, the task directive, a criterion. */
const MACHINE_LINE = /^(?=(?:Review (?:task|round|nonce|candidate|fork)|Your task):|#\d+ )/gm;

/** Pure: `text` with every line that would read as a machine line indented by one space. */
export function defuse(text: string): string {
  return text.replace(MACHINE_LINE, ' ');
}

/** The longest run of backticks in `text` (a loop: a diff may hold more runs than a spread takes arguments). */
function longestBacktickRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (const char of text) {
    run = char === '`' ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/**
 * Pure: `text` in a backtick fence longer than any backtick run inside it, so no line of the text can close it,
 * labelled by `info` (no backticks: an info string may not hold one). Machine lines inside are defused.
 */
export function fence(text: string, info: string): string {
  const ticks = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  const body = defuse(text.replace(/\n$/, ''));
  return `${ticks}${info.replace(/`/g, '')}\n${body}\n${ticks}`;
}

/**
 * Pure: `text` cut to at most `maxBytes` of UTF-8, at the last line end inside the cap when there is one, never
 * inside a character. `cut` is the bytes kept, undefined when nothing was cut.
 */
export function cutToBytes(text: string, maxBytes: number): { readonly text: string; readonly cut?: number } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text };
  let end = bytes.lastIndexOf(0x0a, maxBytes - 1) + 1;
  if (end === 0) {
    end = maxBytes;
    // Back off continuation bytes (10xxxxxx) to the start of the character the cap falls in.
    while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  }
  return { text: bytes.subarray(0, end).toString('utf8'), cut: end };
}
