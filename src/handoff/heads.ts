// What a task's bundle may hold, decided from what git says of it. Pure: the
// runner reads `git bundle list-heads` and the bundle's size, this says yes
// or why not; acceptance (accept.ts) only applies the answer.

/** A bundle larger than this is refused unless the runner is given another bound (--bundle-max-mb). */
export const DEFAULT_BUNDLE_MAX_BYTES = 256 * 1024 * 1024;

export interface BundleHead {
  readonly commit: string;
  readonly ref: string;
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Pure: `git bundle list-heads` output as heads; a line that is not `<oid> <ref>` is a problem. */
export function parseBundleHeads(output: string): BundleHead[] | string {
  const heads: BundleHead[] = [];
  for (const line of output.split('\n')) {
    if (!line.trim()) continue;
    const match = /^(\S+) (\S+)$/.exec(line.trim());
    if (!match || !OBJECT_ID.test(match[1]!)) return `the bundle lists "${line.slice(0, 120)}", not a ref`;
    heads.push({ commit: match[1]!, ref: match[2]! });
  }
  return heads;
}

/**
 * Pure: the one commit a task's bundle hands over, or why it is refused. It must name exactly the task's own branch
 * (refs/heads/<branch>) and nothing else: not the base, not auto/work, not a tag, not a second ref.
 */
export function taskBundleCommit(heads: readonly BundleHead[], branch: string): { commit: string } | string {
  const expected = `refs/heads/${branch}`;
  if (heads.length === 0) return `the bundle names no ref; it must name ${expected} alone`;
  const others = heads.filter((head) => head.ref !== expected).map((head) => head.ref);
  if (others.length)
    return `the bundle names ${others.slice(0, 5).join(', ')}${others.length > 5 ? ', ...' : ''}; it may name ${expected} alone`;
  if (heads.length > 1) return `the bundle names ${expected} ${heads.length} times`;
  return { commit: heads[0]!.commit };
}
