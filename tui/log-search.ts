// The log tab's search, pure: which lines hold the text (case-insensitive),
// the next or previous match from the current one (wrapping round), and a
// line cut into the pieces to highlight.

export interface LogSearch {
  /** The text looked for; empty: no search. */
  readonly query: string;
  /** The text is being typed (keys go to it). */
  readonly editing: boolean;
  /** The index of the log line of the current match, or null when none is current. */
  readonly current: number | null;
}

/** The indexes of the lines that contain `query`, any case. */
export function logMatches(lines: readonly string[], query: string): number[] {
  const wanted = query.toLowerCase();
  if (!wanted) return [];
  return lines.flatMap((line, i) => (line.toLowerCase().includes(wanted) ? [i] : []));
}

/** The match after (`step` 1) or before (-1) `current`, wrapping round; the first or last when none is current. */
export function nextMatch(matches: readonly number[], current: number | null, step: 1 | -1): number | null {
  if (!matches.length) return null;
  if (current === null) return step === 1 ? matches[0]! : matches.at(-1)!;
  if (step === 1) return matches.find((line) => line > current) ?? matches[0]!;
  return [...matches].reverse().find((line) => line < current) ?? matches.at(-1)!;
}

export interface Piece {
  readonly text: string;
  readonly match: boolean;
}

/** The line cut into plain pieces and the pieces that match `query`, any case. */
export function highlightPieces(text: string, query: string): Piece[] {
  if (!query) return [{ text, match: false }];
  // Lower case only where it keeps every offset (a few letters grow when lowered).
  const caseless = text.toLowerCase().length === text.length && query.toLowerCase().length === query.length;
  const lower = caseless ? text.toLowerCase() : text;
  const wanted = caseless ? query.toLowerCase() : query;
  const pieces: Piece[] = [];
  let from = 0;
  for (let at = lower.indexOf(wanted); at >= 0; at = lower.indexOf(wanted, at + wanted.length)) {
    if (at > from) pieces.push({ text: text.slice(from, at), match: false });
    pieces.push({ text: text.slice(at, at + wanted.length), match: true });
    from = at + wanted.length;
  }
  if (from < text.length || !pieces.length) pieces.push({ text: text.slice(from), match: false });
  return pieces;
}
