// Which paths changed, as named verbs (plumbing where it can be, so no
// diff.* config of the repo applies): between commits, against HEAD in the
// index and the tree, and every path of a tree. Renames count as a delete and an add. NUL-separated
// output, so any file name survives; the one exception is the changed lines of a patch, whose paths git
// C-quotes instead (parseChangedLines unquotes them).
import type { ChangedLines, LineRange } from '../types.js';
import type { Git } from './git.js';

export type { ChangedLines, LineRange };

const nulSeparated = (text: string): string[] => text.split('\0').filter(Boolean);

/** Pure: pathspecs that match only themselves (no glob characters apply). */
export function literalPathspecs(paths: readonly string[]): string[] {
  return paths.map((entry) => `:(literal)${entry}`);
}

/** Paths that differ between two commits. */
export async function changedBetween(git: Git, cwd: string, from: string, to: string): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to]));
}

/**
 * Paths that differ between the merge base of `onto` and `to`, and `to`, in
 * one git process; undefined when git cannot say so (no merge base, or more
 * than one), for the caller to find the base itself.
 */
export async function changedSinceMergeBase(
  git: Git,
  cwd: string,
  onto: string,
  to: string,
): Promise<string[] | undefined> {
  const result = await git.try(cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', '--merge-base', onto, to]);
  return result.exitCode === 0 ? nulSeparated(result.stdout) : undefined;
}

/** Every file path of the tree at `commitish`. */
export async function treePaths(git: Git, cwd: string, commitish: string): Promise<string[]> {
  return nulSeparated(await git.run(cwd, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commitish]));
}

/**
 * Paths under `pathspecs` that differ from HEAD in the index or the
 * worktree, or exist untracked or ignored: one `git status`, which compares
 * content where the index's stat data is stale (a merge leaves it so).
 */
export async function changedAgainstHead(git: Git, cwd: string, pathspecs: readonly string[]): Promise<string[]> {
  const entries = nulSeparated(
    await git.run(cwd, [
      'status',
      '--porcelain=v1',
      '-z',
      '--no-renames',
      '--untracked-files=all',
      '--ignored=matching',
      '--',
      ...pathspecs,
    ]),
  );
  // Each entry is "XY path": two status letters and a space.
  return entries.map((entry) => entry.slice(3));
}

const C_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Pure: a path as git C-quotes it ("a\\"b\\303\\251"), or as it is when unquoted. */
function unquotePath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      const next = body[i + 1] ?? '';
      bytes.push(C_ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The path after a/ or b/ in a ---/+++ line or the diff --git header; undefined for /dev/null. Git ends a ---/+++
 * name that holds a space with a tab (a tab in a name is always quoted, so a bare one at the end is git's).
 */
function sidePath(text: string, prefix: 'a/' | 'b/'): string | undefined {
  const name = text.endsWith('\t') ? text.slice(0, -1) : text;
  if (name === '/dev/null') return undefined;
  const path = unquotePath(name);
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/**
 * The new-side path of a `diff --git a/P b/P` header. With --no-renames both sides name the same path, so an
 * unquoted header is split in the middle (a path may hold " b/"); a quoted one is two quoted names.
 */
function headerPath(rest: string): string | undefined {
  if (!rest.startsWith('"')) {
    const half = (rest.length - 1) / 2;
    return Number.isInteger(half) ? sidePath(rest.slice(half + 1), 'b/') : undefined;
  }
  // The first name ends at its first quote that no backslash escapes.
  for (let i = 1; i < rest.length; i++) {
    if (rest[i] === '\\') i += 1;
    else if (rest[i] === '"') return rest[i + 1] === ' ' ? sidePath(rest.slice(i + 2), 'b/') : undefined;
  }
  return undefined;
}

/**
 * Pure: the new-side line ranges of `git diff -U0 --no-renames` output, per path as git names it (quoted paths
 * unquoted). A deleted file is absent; a file with only deletions (or a binary one) has no ranges. Lines inside a
 * hunk are counted off its header, so an added line that reads like a header ("+++ x") is never taken for one.
 */
export function parseChangedLines(unifiedZeroDiff: string): ChangedLines {
  const changed = new Map<string, LineRange[]>();
  let path: string | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of unifiedZeroDiff.split('\n')) {
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith('-')) oldLeft -= 1;
      else if (line.startsWith('+')) newLeft -= 1;
      else if (!line.startsWith('\\')) oldLeft = newLeft = 0;
      continue;
    }
    if (line.startsWith('diff --git ')) {
      path = headerPath(line.slice('diff --git '.length));
      if (path !== undefined) changed.set(path, []);
    } else if (line.startsWith('deleted file mode ')) {
      if (path !== undefined) changed.delete(path);
      path = undefined;
    } else if (line.startsWith('+++ ')) {
      const named = sidePath(line.slice(4), 'b/');
      if (path !== undefined && named !== path) changed.delete(path);
      path = named;
      if (path !== undefined && !changed.has(path)) changed.set(path, []);
    } else if (line.startsWith('@@ ')) {
      const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!hunk) continue;
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[3] === undefined ? 1 : Number(hunk[3]);
      if (path !== undefined && newLeft > 0) changed.get(path)?.push({ start: Number(hunk[2]), count: newLeft });
    }
  }
  return changed;
}

/**
 * The lines `to` adds or changes against `from` (diff-tree, plumbing: no diff.* config of the repo applies;
 * prefixes and quoting fixed, so the parser reads what it expects).
 */
export async function changedLines(git: Git, dir: string, from: string, to: string): Promise<ChangedLines> {
  const patch = await git.run(dir, [
    '-c',
    'core.quotePath=true',
    'diff-tree',
    '-r',
    '-p',
    '-U0',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    from,
    to,
  ]);
  return parseChangedLines(patch);
}
