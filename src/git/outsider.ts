// Root's reads of a repo it does not own, as named commands (data): each is
// an outsiderReadCommand (that one path marked safe, no home config, no hook),
// run by the caller through its ProcessPort. Used by the control plane's
// board snapshot and fleet view.
import type { Command } from '../types.js';
import { outsiderReadCommand } from './git.js';

/** `git cat-file --batch-check` for `names` (`<rev>:<path>`, oids), fed on stdin one a line. */
export function catFileBatchCheck(repoPath: string, names: readonly string[]): Command {
  return { ...outsiderReadCommand(repoPath, ['cat-file', '--batch-check']), stdin: `${names.join('\n')}\n` };
}

/** `git cat-file --batch` for `objects`, fed on stdin one a line: each object's header and content. */
export function catFileBatch(repoPath: string, objects: readonly string[]): Command {
  return { ...outsiderReadCommand(repoPath, ['cat-file', '--batch']), stdin: `${objects.join('\n')}\n` };
}

/**
 * `git cat-file --batch-command` (git 2.36+): for each request, what
 * `--batch-check` says of it (`info`), or that and its content, as
 * `--batch` gives it (`contents`). Output kept as bytes (binaryStdout): trees
 * come as git stores them.
 */
export function catFileBatchCommand(
  repoPath: string,
  requests: readonly { readonly name: string; readonly contents: boolean }[],
): Command {
  return {
    ...outsiderReadCommand(repoPath, ['cat-file', '--batch-command']),
    stdin: requests.map(({ name, contents }) => `${contents ? 'contents' : 'info'} ${name}\n`).join(''),
    binaryStdout: true,
  };
}

/**
 * `git ls-tree -z <tree>`: the tree's entries, one level, NUL-ended, names as stored (without -z git quotes a name
 * beyond ASCII).
 */
export function lsTree(repoPath: string, tree: string): Command {
  return outsiderReadCommand(repoPath, ['ls-tree', '-z', tree]);
}

/** `git ls-tree <ref> -- <path>`: the one entry at `path` (its mode first), or nothing when there is none. */
export function lsTreePath(repoPath: string, ref: string, file: string): Command {
  return outsiderReadCommand(repoPath, ['ls-tree', ref, '--', file]);
}

/** The names of those of `refs` that exist, one a line. */
export function existingRefs(repoPath: string, refs: readonly string[]): Command {
  return outsiderReadCommand(repoPath, ['for-each-ref', '--format=%(refname)', ...refs]);
}

/** "<behind> <ahead>": the commits only on `left`, and only on `right`. */
export function revListLeftRightCount(repoPath: string, left: string, right: string): Command {
  return outsiderReadCommand(repoPath, ['rev-list', '--left-right', '--count', `${left}...${right}`]);
}
