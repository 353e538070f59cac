// The commit refs point at, read from git's ref files as data instead of
// starting git: a loose ref (`<git dir>/refs/...`), else its line in
// packed-refs, as git itself looks. Read through FsPort.readUntrustedFiles (no
// link followed, regular files only, bounded): fleet reads repos it does not
// own this way for its cache key, a drain its worktrees' HEAD. Anything not
// exactly as git writes it (a symbolic ref, a link, a file too big, reftable)
// is undefined: the caller asks git.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** packed-refs past this is read through git instead. */
const MAX_PACKED_REFS = 4 * 1024 * 1024;
export const MAX_LOOSE_REF = 1024;

/** Pure: a full commit id, SHA-1 or SHA-256, as git writes it. */
export function isOid(text: string): boolean {
  return OID.test(text);
}

/** Pure: packed-refs to ref name -> oid; undefined when a line is not what git writes. */
export function parsePackedRefs(text: string): Map<string, string> | undefined {
  const refs = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const oid = line.slice(0, space);
    if (space < 0 || !isOid(oid)) return undefined;
    refs.set(line.slice(space + 1), oid);
  }
  return refs;
}

/** Pure: a loose ref file's oid; undefined for a symbolic ref or anything else. */
export function looseRefOid(text: string): string | undefined {
  const oid = text.endsWith('\n') ? text.slice(0, -1) : text;
  return isOid(oid) ? oid : undefined;
}

/** Pure: a full ref name (refs/...) that is a plain path below the git dir: no empty, . or .. part. */
export function isPlainRefName(ref: string): boolean {
  return ref.startsWith('refs/') && !ref.split('/').some((part) => part === '' || part === '.' || part === '..');
}

/**
 * The oid each of `refs` (full names: refs/heads/main) points at in the git
 * dir `root/gitDir` (gitDir relative to root, '' for root itself), null when
 * the ref does not exist; undefined when the files are not plainly what git
 * writes. packed-refs is read only when a ref has no loose file. A missing
 * git dir, or reftable (no loose or packed refs), reads as all null: a caller
 * must not take "none of them exists" for an answer.
 */
export async function readRefOids(
  files: Pick<FsPort, 'readUntrustedFiles'>,
  root: string,
  gitDir: string,
  refs: readonly string[],
): Promise<(string | null)[] | undefined> {
  try {
    if (!refs.every(isPlainRefName)) return undefined;
    // The loose files in one walk (they share refs/); packed-refs only when one of them has none.
    const loose = await files.readUntrustedFiles(
      root,
      refs.map((ref) => path.posix.join(gitDir, ref)),
      MAX_LOOSE_REF,
    );
    let packed: Map<string, string> | undefined;
    const oids: (string | null)[] = [];
    for (const [i, ref] of refs.entries()) {
      const text = loose[i];
      if (text !== undefined) {
        const oid = looseRefOid(text);
        if (!oid) return undefined;
        oids.push(oid);
        continue;
      }
      if (!packed) {
        const [packedText] = await files.readUntrustedFiles(
          root,
          [path.posix.join(gitDir, 'packed-refs')],
          MAX_PACKED_REFS,
        );
        packed = packedText === undefined ? new Map<string, string>() : parsePackedRefs(packedText);
        if (!packed) return undefined;
      }
      oids.push(packed.get(ref) ?? null);
    }
    return oids;
  } catch {
    // A link, a directory where a file should be, a file too big: git decides.
    return undefined;
  }
}
