// The commit a few refs point at, read from the repo's ref files as data
// (FsPort.readUntrusted: no link followed, regular files only, bounded), with
// no git process: fleet uses them only as a cache key (fleet-cache.ts), so a
// layout it does not know (a .git file, reftable, a symbolic ref, anything
// unexpected) answers undefined and the caller reads through git instead.
import type { FsPort } from '../ports.js';

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** packed-refs past this is read through git instead. */
const MAX_PACKED_REFS = 4 * 1024 * 1024;
const MAX_LOOSE_REF = 1024;

/** Pure: packed-refs to ref name -> oid; undefined when a line is not what git writes. */
export function parsePackedRefs(text: string): Map<string, string> | undefined {
  const refs = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const oid = line.slice(0, space);
    if (space < 0 || !OID.test(oid)) return undefined;
    refs.set(line.slice(space + 1), oid);
  }
  return refs;
}

/** Pure: a loose ref file's oid; undefined for a symbolic ref or anything else. */
export function looseRefOid(text: string): string | undefined {
  const oid = text.endsWith('\n') ? text.slice(0, -1) : text;
  return OID.test(oid) ? oid : undefined;
}

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
      if (!ref.startsWith('refs/') || ref.split('/').some((part) => part === '' || part === '.' || part === '..')) return undefined;
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
