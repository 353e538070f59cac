// Objects as named verbs: a path's entry in a commit's tree, a blob's bytes,
// a file as of a commit. Read from the object store, so no link in a
// worktree is ever followed. Thin typed wrappers over Git.
import type { Git } from './git.js';

export interface TreeEntry {
  readonly mode: string;
  readonly type: string;
  readonly object: string;
}

/** Pure: one `git ls-tree -z` entry, or undefined when the output is empty. */
function parseTreeEntry(output: string): TreeEntry | undefined {
  const entry = output.split('\0')[0];
  if (!entry) return undefined;
  const [meta] = entry.split('\t');
  const [mode, type, object] = (meta ?? '').split(' ');
  return mode && type && object ? { mode, type, object } : undefined;
}

/** The entry of `file` (a literal path) in `commit`'s tree, or undefined when the tree has no such path. */
export async function treeEntry(git: Git, cwd: string, commit: string, file: string): Promise<TreeEntry | undefined> {
  return parseTreeEntry(await git.run(cwd, ['ls-tree', '-z', commit, '--', `:(literal)${file}`]));
}

/** A blob's content. */
export function readBlob(git: Git, cwd: string, object: string): Promise<string> {
  return git.run(cwd, ['cat-file', 'blob', object]);
}

/** `file` as of `commitish`, or undefined when it has no such file. */
export async function showFileAt(git: Git, cwd: string, commitish: string, file: string): Promise<string | undefined> {
  const shown = await git.try(cwd, ['show', `${commitish}:${file}`]);
  return shown.exitCode === 0 ? shown.stdout : undefined;
}

/** The blob of each of `files` (literal paths) in `commit`'s tree; a path the tree lacks is absent from the map. */
export async function blobsAt(
  git: Git,
  cwd: string,
  commit: string,
  files: readonly string[],
): Promise<Map<string, string>> {
  const blobs = new Map<string, string>();
  if (!files.length) return blobs;
  const output = await git.run(cwd, ['ls-tree', '-z', commit, '--', ...files.map((file) => `:(literal)${file}`)]);
  for (const entry of output.split('\0').filter(Boolean)) {
    const tab = entry.indexOf('\t');
    const [, type, object] = entry.slice(0, tab).split(' ');
    if (type === 'blob' && object) blobs.set(entry.slice(tab + 1), object);
  }
  return blobs;
}

/**
 * The blob each of `files` in the working tree would be, hashed as stored (no filters: a filter runs a program the
 * repo's config names).
 */
export async function worktreeBlobs(git: Git, cwd: string, files: readonly string[]): Promise<Map<string, string>> {
  const blobs = new Map<string, string>();
  if (!files.length) return blobs;
  const oids = (await git.run(cwd, ['hash-object', '--no-filters', '--', ...files])).split('\n').filter(Boolean);
  files.forEach((file, index) => oids[index] && blobs.set(file, oids[index]));
  return blobs;
}
