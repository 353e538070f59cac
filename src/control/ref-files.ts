// The commit a few refs point at, read from the repo's ref files as data
// (FsPort.readUntrusted: no link followed, regular files only, bounded), with
// no git process: fleet uses them only as a cache key (fleet-cache.ts), so a
// layout it does not know (a .git file, reftable, a symbolic ref, anything
// unexpected) answers undefined and the caller reads through git instead.
import type { FsPort } from '../ports.js';
import { isPlainRefName, looseRefOid, MAX_LOOSE_REF, MAX_PACKED_REFS, parsePackedRefs } from '../git/ref-text.js';

/**
 * The oid each of `refs` (full names: refs/heads/main) points at, null when
 * the ref does not exist; undefined when the repo is not a plain files-backend
 * .git directory this can read with certainty. A .git that is a file or a
 * link fails the walk (undefined); reftable keeps no loose or packed refs, so
 * it reads as all null, as does a path with no .git: a caller must not take
 * "none of them exists" for an answer (fleet-cache.ts never does).
 */
export async function readRefOids(fs: FsPort, repoPath: string, refs: readonly string[]): Promise<(string | null)[] | undefined> {
  try {
    const packedText = await fs.readUntrusted(repoPath, '.git/packed-refs', MAX_PACKED_REFS);
    const packed = packedText === undefined ? new Map<string, string>() : parsePackedRefs(packedText);
    if (!packed) return undefined;
    const oids: (string | null)[] = [];
    for (const ref of refs) {
      if (!isPlainRefName(ref)) return undefined;
      const loose = await fs.readUntrusted(repoPath, `.git/${ref}`, MAX_LOOSE_REF);
      if (loose === undefined) {
        oids.push(packed.get(ref) ?? null);
        continue;
      }
      const oid = looseRefOid(loose);
      if (!oid) return undefined;
      oids.push(oid);
    }
    return oids;
  } catch {
    // A link, a directory where a file should be, a file too big: git decides.
    return undefined;
  }
}
