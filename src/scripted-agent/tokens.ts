// The words of the scripted agent's instruction lines (`agent:`, `fix:`,
// `review:` in a task description): quoted strings with JSON escapes,
// workspace paths that cannot leave the workspace, and one problem per bad
// line, named by its line number. Pure.

export class Problem extends Error {}

export interface Block<T> {
  readonly instructions: readonly T[];
  /** One entry per line that could not be read: "line 3 of the description: ...". */
  readonly problems: readonly string[];
}

const TOKEN = /\s*("(?:[^"\\]|\\.)*"|[^\s"]+)/y;

export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let position = 0;
  while (text.slice(position).trim()) {
    TOKEN.lastIndex = position;
    const match = TOKEN.exec(text);
    if (!match) throw new Problem(`cannot read ${JSON.stringify(text.slice(position).trim())} (an unclosed quote?)`);
    tokens.push(match[1]!);
    position = TOKEN.lastIndex;
  }
  return tokens;
}

export function unquote(token: string): string {
  if (!token.startsWith('"')) return token;
  try {
    return JSON.parse(token) as string;
  } catch {
    throw new Problem(`${token} is not a valid quoted string (use JSON escapes: \\n, \\", \\\\)`);
  }
}

export function quoted(token: string | undefined, what: string): string {
  if (token === undefined || !token.startsWith('"')) throw new Problem(`${what} must be a double-quoted string`);
  return unquote(token);
}

/** A workspace-relative path that cannot escape the workspace or touch .git. */
export function safeRelativePath(raw: string): string | undefined {
  if (!raw || raw.includes('\0') || raw.startsWith('/') || raw.includes('\\')) return undefined;
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (!parts.length || parts.some((part) => part === '..') || parts[0] === '.git') return undefined;
  return parts.join('/');
}

export function pathArgument(token: string | undefined): string {
  if (token === undefined) throw new Problem('a PATH is required');
  const path = safeRelativePath(unquote(token));
  if (!path) throw new Problem(`path ${token} must be relative to the workspace, without "..", and not inside .git`);
  return path;
}

/** `usage` is the whole expected line after its prefix, e.g. "write PATH \"TEXT\"". */
export function expectArity(tokens: readonly string[], count: number, prefix: string, usage: string): void {
  if (tokens.length !== count) throw new Problem(`expected: ${prefix}: ${usage}`);
}

export function secondsArgument(verb: string, token: string | undefined): number {
  const seconds = Number(token);
  if (!/^\d+(?:\.\d+)?$/.test(token ?? '') || seconds > 3600)
    throw new Problem(`${verb} takes seconds from 0 to 3600, not ${token}`);
  return seconds;
}

export function exitCodeArgument(token: string | undefined): number {
  const code = Number(token);
  if (!/^\d{1,3}$/.test(token ?? '') || code > 255) throw new Problem(`exit takes a code from 0 to 255, not ${token}`);
  return code;
}

/** A count of rounds or sessions, 1 to 99. */
export function countArgument(verb: string, what: string, token: string | undefined): number {
  if (!/^\d{1,2}$/.test(token ?? '') || Number(token) < 1)
    throw new Problem(`${verb} takes a number of ${what} from 1 to 99, not ${token}`);
  return Number(token);
}

/** The lines starting with `PREFIX:` (a list item `- PREFIX:` too), each read by parseOne. */
export function readLines<T>(description: string, prefix: string, parseOne: (tokens: string[]) => T): Block<T> {
  const line = new RegExp(`^\\s*(?:[-*]\\s+)?${prefix}:\\s*(.*?)\\s*$`);
  const instructions: T[] = [];
  const problems: string[] = [];
  description.split(/\r?\n/).forEach((text, index) => {
    const match = line.exec(text);
    if (!match) return;
    try {
      instructions.push(parseOne(tokenize(match[1]!)));
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      problems.push(`line ${index + 1} of the description: ${error.message}`);
    }
  });
  return { instructions, problems };
}
