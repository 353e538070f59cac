// The instruction block of a task for the scripted agent: lines in the task
// description starting with `agent:` (optionally as a list item). Pure.
//
//   agent: write PATH "TEXT"      write TEXT and a newline to PATH (folders created)
//   agent: append PATH "LINE"     append LINE and a newline to PATH
//   agent: sleep SECONDS          wait, printing nothing (decimals allowed, at most 3600)
//   agent: exit N                 stop here with exit code N: no status change, no commit
//   agent: hang                   stop printing and never finish (for the idle watchdog)
//   agent: silent                 print nothing at all, still do the work and finish
//   agent: block "REASON"         finish as Blocked with REASON as a note instead of Done
//   agent: leave-status           do the work and commit, but leave the status In Progress
//   agent: claude-result KIND     when posing as claude: fail at once the way claude does,
//                                 KIND is not-logged-in, rate-limited or max-turns
//   agent: rate-limit N           when posing as claude: the task's first N sessions hit a
//                                 rate limit (claude 2.x's rejected rate_limit_event and
//                                 result), doing nothing; counted in the git dir
//   agent: rate-limit-event       when posing as claude: finish normally, but the stream
//                                 also carries a rejected rate_limit_event
//   agent: cost USD               when posing as claude: report this total_cost_usd
//   agent: spend USD              when posing as claude: the session's cost grows by USD
//                                 here; past --max-budget-usd it stops at once with
//                                 claude's error_max_budget_usd result, as claude does
//   agent: ignore-budget          when posing as claude: do not honour --max-budget-usd
//                                 (a CLI that overshoots its flag)
//   agent: linger SECONDS         when posing as claude: stay alive this long, silent,
//                                 after the result line (claude sometimes does)
//
// TEXT, LINE and REASON are double-quoted with JSON escapes (\n, \", \\);
// a PATH is relative to the workspace, may be quoted, and never leaves it.

export type ClaudeResultKind = 'not-logged-in' | 'rate-limited' | 'max-turns';

export type Instruction =
  | { readonly kind: 'write'; readonly path: string; readonly text: string }
  | { readonly kind: 'append'; readonly path: string; readonly line: string }
  | { readonly kind: 'sleep'; readonly seconds: number }
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'silent' }
  | { readonly kind: 'block'; readonly reason: string }
  | { readonly kind: 'leave-status' }
  | { readonly kind: 'claude-result'; readonly result: ClaudeResultKind }
  | { readonly kind: 'rate-limit'; readonly sessions: number }
  | { readonly kind: 'rate-limit-event' }
  | { readonly kind: 'cost'; readonly usd: number }
  | { readonly kind: 'spend'; readonly usd: number }
  | { readonly kind: 'ignore-budget' }
  | { readonly kind: 'linger'; readonly seconds: number };

export interface InstructionBlock {
  readonly instructions: readonly Instruction[];
  /** One entry per line that could not be read: "line 3: ... ". */
  readonly problems: readonly string[];
}

const CLAUDE_RESULTS: readonly ClaudeResultKind[] = ['not-logged-in', 'rate-limited', 'max-turns'];
const LINE = /^\s*(?:[-*]\s+)?agent:\s*(.*?)\s*$/;
const TOKEN = /\s*("(?:[^"\\]|\\.)*"|[^\s"]+)/y;

class Problem extends Error {}

function tokenize(text: string): string[] {
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

function unquote(token: string): string {
  if (!token.startsWith('"')) return token;
  try {
    return JSON.parse(token) as string;
  } catch {
    throw new Problem(`${token} is not a valid quoted string (use JSON escapes: \\n, \\", \\\\)`);
  }
}

function quoted(token: string | undefined, what: string): string {
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

function pathArgument(token: string | undefined): string {
  if (token === undefined) throw new Problem('a PATH is required');
  const path = safeRelativePath(unquote(token));
  if (!path) throw new Problem(`path ${token} must be relative to the workspace, without "..", and not inside .git`);
  return path;
}

function expectArity(tokens: readonly string[], count: number, usage: string): void {
  if (tokens.length !== count) throw new Problem(`expected: agent: ${usage}`);
}

function parseOne(tokens: readonly string[]): Instruction {
  const [verb, first, second] = tokens;
  switch (verb) {
    case 'write':
      expectArity(tokens, 3, 'write PATH "TEXT"');
      return { kind: 'write', path: pathArgument(first), text: quoted(second, 'TEXT') };
    case 'append':
      expectArity(tokens, 3, 'append PATH "LINE"');
      return { kind: 'append', path: pathArgument(first), line: quoted(second, 'LINE') };
    case 'sleep':
    case 'linger': {
      expectArity(tokens, 2, `${verb} SECONDS`);
      const seconds = Number(first);
      if (!/^\d+(?:\.\d+)?$/.test(first ?? '') || seconds > 3600)
        throw new Problem(`${verb} takes seconds from 0 to 3600, not ${first}`);
      return { kind: verb, seconds };
    }
    case 'exit': {
      expectArity(tokens, 2, 'exit N');
      const code = Number(first);
      if (!/^\d{1,3}$/.test(first ?? '') || code > 255)
        throw new Problem(`exit takes a code from 0 to 255, not ${first}`);
      return { kind: 'exit', code };
    }
    case 'hang':
    case 'silent':
    case 'leave-status':
    case 'rate-limit-event':
    case 'ignore-budget':
      expectArity(tokens, 1, verb);
      return { kind: verb };
    case 'rate-limit': {
      expectArity(tokens, 2, 'rate-limit N');
      if (!/^\d{1,2}$/.test(first ?? ''))
        throw new Problem(`rate-limit takes a number of sessions from 0 to 99, not ${first}`);
      return { kind: 'rate-limit', sessions: Number(first) };
    }
    case 'cost':
    case 'spend': {
      expectArity(tokens, 2, `${verb} USD`);
      if (!/^\d+(?:\.\d+)?$/.test(first ?? '')) throw new Problem(`${verb} takes dollars like 0.25, not ${first}`);
      return { kind: verb, usd: Number(first) };
    }
    case 'block':
      expectArity(tokens, 2, 'block "REASON"');
      return { kind: 'block', reason: quoted(first, 'REASON') };
    case 'claude-result': {
      expectArity(tokens, 2, `claude-result ${CLAUDE_RESULTS.join('|')}`);
      const result = CLAUDE_RESULTS.find((kind) => kind === first);
      if (!result) throw new Problem(`claude-result takes ${CLAUDE_RESULTS.join(', ')}, not ${first}`);
      return { kind: 'claude-result', result };
    }
    default:
      throw new Problem(
        `unknown instruction ${JSON.stringify(verb ?? '')} (known: write, append, sleep, exit, hang, silent, block, leave-status, claude-result, rate-limit, rate-limit-event, cost, spend, ignore-budget, linger)`,
      );
  }
}

export function parseInstructions(description: string): InstructionBlock {
  const instructions: Instruction[] = [];
  const problems: string[] = [];
  description.split(/\r?\n/).forEach((text, index) => {
    const match = LINE.exec(text);
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
