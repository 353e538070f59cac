// git plumbing as named argv (the arguments after `git`), for callers that
// build the Command themselves: run as another user (privdrop), with a
// private index (GIT_INDEX_FILE) or a minimal environment. Pure.

/** The commit `ref` names; exits non-zero (and prints nothing) when there is none. */
export function verifyCommitArgs(ref: string): string[] {
  return ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`];
}

/** The repository's git dir as an absolute path. */
export function absoluteGitDirArgs(): string[] {
  return ['rev-parse', '--absolute-git-dir'];
}

/** The git dir all worktrees of the repository share, as an absolute path. */
export function commonGitDirArgs(): string[] {
  return ['rev-parse', '--path-format=absolute', '--git-common-dir'];
}

/** Every file path under the `prefixes` in `treeish`, recursively, NUL-separated (so git quotes no name). */
export function listFileNamesArgs(treeish: string, ...prefixes: string[]): string[] {
  return ['ls-tree', '-r', '-z', '--name-only', treeish, '--', ...prefixes];
}

/** Writes stdin as a blob into the object store; prints its oid. */
export function hashObjectFromStdinArgs(): string[] {
  return ['hash-object', '-w', '--stdin'];
}

/** Loads `treeish` into the index. */
export function readTreeArgs(treeish: string): string[] {
  return ['read-tree', treeish];
}

/** Adds (or replaces) `file` in the index as a regular file holding `blob`. */
export function addBlobToIndexArgs(blob: string, file: string): string[] {
  return ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`];
}

/** Writes the index as a tree; prints its oid. */
export function writeTreeArgs(): string[] {
  return ['write-tree'];
}

/** A commit of `tree` with one `parent`; prints its oid. */
export function commitTreeArgs(tree: string, parent: string, message: string): string[] {
  return ['commit-tree', tree, '-p', parent, '-m', message];
}

/** Compare-and-swap: moves `ref` to `value` only if it is still at `expected`. */
export function updateRefArgs(ref: string, value: string, expected: string, reason: string): string[] {
  return ['update-ref', '-m', reason, ref, value, expected];
}

/** `git clone` of `url` into `dir` with `branch` checked out. */
export function cloneArgs(url: string, dir: string, branch: string): string[] {
  return ['clone', '--quiet', '--branch', branch, '--', url, dir];
}

/** Sets `key` in the local config of the repo at `repoDir`. */
export function setLocalConfigArgs(repoDir: string, key: string, value: string): string[] {
  return ['-C', repoDir, 'config', '--local', key, value];
}

/** Reads `key` as the repo at `repoDir` resolves it. */
export function getConfigArgs(repoDir: string, key: string): string[] {
  return ['-C', repoDir, 'config', key];
}
