// Where the YAML frontmatter of a task file starts and ends, and where one
// top-level key's entry sits inside it, as character offsets, so that edits
// can replace exactly those bytes and leave the rest of the file alone.

export interface FrontmatterSpan {
  /** Offset of the first YAML character (after the opening `---` line). */
  readonly yamlStart: number;
  /** Offset just past the YAML (where the closing `---` line starts). */
  readonly yamlEnd: number;
  /** Offset of the body (after the closing `---` line and its newline). */
  readonly bodyStart: number;
}

/** The frontmatter of a task file, or undefined when the file has none. */
export function findFrontmatter(text: string): FrontmatterSpan | undefined {
  const opening = /^\uFEFF?---[ \t]*\r?\n/.exec(text);
  if (!opening) return undefined;
  const closing = /^---[ \t]*(?:\r?\n|$)/gm;
  closing.lastIndex = opening[0].length;
  const match = closing.exec(text);
  if (!match) return undefined;
  return { yamlStart: opening[0].length, yamlEnd: match.index, bodyStart: match.index + match[0].length };
}

export interface EntrySpan {
  /** Offset of the key's first character. */
  readonly start: number;
  /** Offset just past the entry's last line (including its newline). */
  readonly end: number;
  /** Offset just past the last line of the entry that holds content (not blank, not a comment). */
  readonly contentEnd: number;
}

/**
 * The lines of a top-level key in the frontmatter: its own line and every
 * following line that is indented, blank, a comment, or a block-sequence item
 * at column 0 (YAML allows `labels:` followed by `- a` unindented).
 */
export function findEntry(text: string, span: FrontmatterSpan, key: string): EntrySpan | undefined {
  const lines = linesBetween(text, span.yamlStart, span.yamlEnd);
  const keyPattern = new RegExp(`^${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \\t]*:(?:[ \\t]|$)`);
  const index = lines.findIndex((line) => keyPattern.test(line.content));
  if (index < 0) return undefined;
  const first = lines[index]!;
  let end = first.end;
  let contentEnd = first.end;
  for (const line of lines.slice(index + 1)) {
    if (!/^(?:[ \t]|-(?:[ \t]|$)|#|$)/.test(line.content)) break;
    end = line.end;
    if (!/^[ \t]*(?:#.*)?$/.test(line.content)) contentEnd = line.end;
  }
  return { start: first.start, end, contentEnd };
}

interface Line {
  readonly start: number;
  /** Past the newline. */
  readonly end: number;
  /** The line without its newline. */
  readonly content: string;
}

function linesBetween(text: string, from: number, to: number): Line[] {
  const lines: Line[] = [];
  let start = from;
  while (start < to) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 || newline >= to ? to : newline + 1;
    lines.push({ start, end, content: text.slice(start, end).replace(/\r?\n$/, '') });
    start = end;
  }
  return lines;
}

/** The newline the file uses (CRLF files stay CRLF). */
export function newlineOf(text: string): string {
  return /\r\n/.test(text.slice(0, 200)) ? '\r\n' : '\n';
}
