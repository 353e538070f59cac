// Whether a key file as the edge found it may be used: a regular file, not a
// link (symbolic or hard), owned by the broker's own user, readable by nobody
// else (0600 or stricter), holding one key and nothing else. Read by path on
// every request, so a key rotated in place (write a temp file, rename it over)
// is used from the next request on and no run restarts. Pure.
import type { KeyFileRead } from './types.js';

export const KEY_FILE_MAX_BYTES = 16 * 1024;
const KEY_CHARS = /^[\x21-\x7e]{8,4096}$/;

export type KeyVerdict = { readonly ok: true; readonly key: string } | { readonly ok: false; readonly problem: string };

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

/** Pure: the key in the file, or what is wrong with the file and how to fix it. */
export function keyFromFile(path: string, read: KeyFileRead, brokerUid: number): KeyVerdict {
  const problem = (text: string) => ({ ok: false as const, problem: `the key file ${path} ${text}` });
  if (read.kind === 'missing')
    return problem(`does not exist; write the provider's key there (one line, mode 0600, owned by uid ${brokerUid})`);
  if (read.kind === 'symlink')
    return problem('is a symbolic link; the broker reads a key only from a regular file (put the file itself there)');
  if (!read.isFile) return problem('is not a regular file');
  if (read.links !== 1)
    return problem(
      `has ${read.links} hard links; keep the key in one file no other path reaches (copy it, remove the links)`,
    );
  if (read.uid !== brokerUid)
    return problem(`is owned by uid ${read.uid}, not the broker's uid ${brokerUid}; chown it`);
  if ((read.mode & 0o077) !== 0)
    return problem(`is readable or writable by group or others (mode ${octal(read.mode)}); run chmod 600 ${path}`);
  if (read.text === undefined || read.size > KEY_FILE_MAX_BYTES)
    return problem(`is larger than ${KEY_FILE_MAX_BYTES} bytes; it should hold the key alone`);
  const key = read.text.trim();
  if (!KEY_CHARS.test(key))
    return problem(
      key === ''
        ? 'is empty'
        : 'holds something other than one key (8 to 4096 visible characters, no spaces, one line)',
    );
  return { ok: true, key };
}
