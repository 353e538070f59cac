// A worktree's HEAD read from its files (.git, HEAD, the branch's loose ref or
// packed-refs) instead of starting `git rev-parse`: a drain asks for HEAD
// three times per task, and a git process costs more than the answer. Read
// as data through FsPort.readUntrusted (no link followed, regular files
// only, bounded). Anything this does not know for certain (a symbolic ref
// pointing at another, reftable, an unborn branch, a file not as git writes
// it) is undefined: the caller asks git.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { isPlainRefName, looseRefOid, MAX_LOOSE_REF, readRefOids } from './ref-files.js';

type Files = Pick<FsPort, 'readUntrusted' | 'readUntrustedFiles' | 'statUntrusted'>;

/** Pure: the git dir a worktree's `.git` file names ("gitdir: <path>"), resolved against the worktree. */
export function gitDirFromFile(worktree: string, text: string): string | undefined {
  const match = /^gitdir: ([^\n]+)\n?$/.exec(text);
  return match ? path.resolve(worktree, match[1]!) : undefined;
}

/** Pure: the ref a HEAD file names ("ref: refs/heads/x"), or its commit id when detached. */
export function parseHeadFile(text: string): { ref: string } | { oid: string } | undefined {
  const oid = looseRefOid(text);
  if (oid) return { oid };
  const match = /^ref: ([^\n]+)\n?$/.exec(text);
  return match && isPlainRefName(match[1]!) ? { ref: match[1]! } : undefined;
}

async function gitDirOf(files: Files, worktree: string): Promise<string | undefined> {
  const dotGit = await files.statUntrusted(worktree, '.git');
  if (dotGit?.isDirectory) return path.join(worktree, '.git');
  if (!dotGit?.isFile) return undefined;
  const text = await files.readUntrusted(worktree, '.git', MAX_LOOSE_REF);
  return text === undefined ? undefined : gitDirFromFile(worktree, text);
}

/** The commit HEAD of `worktree` is at, from its files; undefined when git must say. */
export async function headFromFiles(files: Files, worktree: string): Promise<string | undefined> {
  try {
    const gitDir = await gitDirOf(files, worktree);
    if (!gitDir) return undefined;
    const headText = await files.readUntrusted(gitDir, 'HEAD', MAX_LOOSE_REF);
    const head = headText === undefined ? undefined : parseHeadFile(headText);
    if (!head || 'oid' in head) return head?.oid;
    // A linked worktree keeps its HEAD; branches live in the common dir it names.
    const commonText = await files.readUntrusted(gitDir, 'commondir', MAX_LOOSE_REF);
    const commonDir = commonText === undefined ? gitDir : path.resolve(gitDir, commonText.trim());
    // A branch with no commit yet (null) is git's to say.
    return (await readRefOids(files, commonDir, '', [head.ref]))?.[0] ?? undefined;
  } catch {
    // A link, a directory where a file should be, a file too big: git decides.
    return undefined;
  }
}
