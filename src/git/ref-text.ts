// Pure: git's ref files as text (a loose ref, packed-refs), for readers that
// take a commit id from the files instead of starting git (fleet's cache key,
// a drain's HEAD). Anything not exactly what git writes is undefined: the
// caller asks git instead.
const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/** packed-refs past this is read through git instead. */
export const MAX_PACKED_REFS = 4 * 1024 * 1024;
export const MAX_LOOSE_REF = 1024;

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

/** Pure: a full ref name (refs/...) that is a plain path below the git dir: no empty, . or .. part. */
export function isPlainRefName(ref: string): boolean {
  return ref.startsWith('refs/') && !ref.split('/').some((part) => part === '' || part === '.' || part === '..');
}
