// Where a change is, as the scripted reviewer cites it: the new-side line
// ranges of `git diff -U0 --no-color --no-ext-diff --no-renames FORK HEAD`
// (deleted files and pure deletions have none), and the `path:line` it
// gives as evidence. A stand-in reviewer reads the diff on its own, as a
// real one would; the review stage judges citations with its own reader.
// Pure.

export interface ChangedRange {
  readonly path: string;
  readonly start: number;
  readonly count: number;
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;
const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  '\\': 92,
};

/** A path as git prints it: C-quoted (octal bytes, \t, \") when it has unusual characters. */
export function unquoteGitPath(raw: string): string {
  if (!raw.startsWith('"') || !raw.endsWith('"') || raw.length < 2) return raw;
  const bytes: number[] = [];
  const body = raw.slice(1, -1);
  for (let at = 0; at < body.length; at++) {
    const char = body[at]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(body.slice(at + 1))?.[0];
    if (octal) {
      bytes.push(parseInt(octal, 8));
      at += 3;
      continue;
    }
    const next = body[at + 1];
    bytes.push(next !== undefined ? (SIMPLE_ESCAPES[next] ?? next.charCodeAt(0)) : 92);
    at += 1;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The `+++ b/PATH` side of a file header; undefined for /dev/null (a deleted file). */
function newSidePath(line: string): string | undefined {
  const raw = unquoteGitPath(line.slice(4).trim());
  if (raw === '/dev/null') return undefined;
  return raw.startsWith('b/') ? raw.slice(2) : raw;
}

export function changedRanges(diff: string): ChangedRange[] {
  const ranges: ChangedRange[] = [];
  let path: string | undefined;
  let inHeader = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      inHeader = true;
      path = undefined;
    } else if (inHeader && line.startsWith('+++ ')) {
      path = newSidePath(line);
    } else if (line.startsWith('@@ ')) {
      inHeader = false;
      const match = HUNK.exec(line);
      const count = match?.[2] === undefined ? 1 : Number(match[2]);
      if (match && path !== undefined && count > 0) ranges.push({ path, start: Number(match[1]), count });
    }
  }
  return ranges;
}

/**
 * The first changed line as `path:line`, outside backlog/ when the change has one there (a task file's status line
 * is weak evidence).
 */
export function firstChangedLine(ranges: readonly ChangedRange[]): string | undefined {
  const first = ranges.find((range) => !range.path.startsWith('backlog/')) ?? ranges[0];
  return first ? `${first.path}:${first.start}` : undefined;
}

/** True when path:line lies in a changed range. */
export function touches(ranges: readonly ChangedRange[], path: string, line: number): boolean {
  return ranges.some((range) => range.path === path && line >= range.start && line < range.start + range.count);
}

/**
 * A line that exists at HEAD and that the change does not touch, as `path:line` (for a citation that must not
 * verify); files outside backlog/ first. lineCount gives a path's lines at HEAD.
 */
export function untouchedLine(
  paths: readonly string[],
  ranges: readonly ChangedRange[],
  lineCount: (path: string) => number,
): string | undefined {
  const ordered = [
    ...paths.filter((path) => !path.startsWith('backlog/')),
    ...paths.filter((path) => path.startsWith('backlog/')),
  ];
  for (const path of ordered) {
    const lines = lineCount(path);
    for (let line = 1; line <= lines; line++) if (!touches(ranges, path, line)) return `${path}:${line}`;
  }
  return undefined;
}
