// Reading a tree a repo user can write, as root. Node has no openat(), so
// the walk goes through /proc/self/fd/N/<name>: the kernel resolves the
// magic link to the directory this process already holds open and then
// exactly one more component, opened with O_NOFOLLOW. A link anywhere below
// the trusted root is refused, not followed; a swap between two steps only
// ever changes which directory the next step starts from, never makes it
// leave the tree. Only regular files are read (O_NONBLOCK: a FIFO planted
// where a file should be cannot hang root), and never more than asked.
// Linux only (/proc).
import { closeSync, constants as c, fstatSync, openSync, readSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { UntrustedStat } from '../ports.js';
import { UntrustedPathError } from '../errors.js';
import { readToBound } from './read-to-bound.js';

type Kind = 'dir' | 'file';

function components(relative: string, where: string): string[] {
  const parts = relative.split('/').filter((part) => part !== '' && part !== '.');
  if (path.isAbsolute(relative) || parts.includes('..'))
    throw new UntrustedPathError(where, 'the path must stay inside its root');
  return parts;
}

function refused(where: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') throw new UntrustedPathError(where, 'is a symbolic link; links are never followed here');
  if (code === 'ENOTDIR') throw new UntrustedPathError(where, 'a component is not a directory (or is a link)');
  throw error;
}

/** Opens root/relative one component at a time; undefined when a component does not exist. */
async function openWalk(root: string, relative: string, last: Kind): Promise<FileHandle | undefined> {
  const where = path.join(root, relative);
  const parts = components(relative, where);
  let dir: FileHandle;
  try {
    dir = await fs.open(root, c.O_RDONLY | c.O_DIRECTORY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  for (let i = 0; i < parts.length; i++) {
    const isLast = i === parts.length - 1;
    const flags =
      c.O_RDONLY | c.O_NOFOLLOW | c.O_NONBLOCK | (isLast ? (last === 'dir' ? c.O_DIRECTORY : 0) : c.O_DIRECTORY);
    let next: FileHandle;
    try {
      next = await fs.open(`/proc/self/fd/${dir.fd}/${parts[i]}`, flags);
    } catch (error) {
      await dir.close();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      refused(where, error);
    }
    await dir.close();
    dir = next;
  }
  return dir;
}

/** What is at root/relative, without following a link there or above it (up to root). */
export async function statUntrusted(root: string, relative: string): Promise<UntrustedStat | undefined> {
  const where = path.join(root, relative);
  const parts = components(relative, where);
  const parent = await openWalk(root, parts.slice(0, -1).join('/'), 'dir');
  if (!parent) return undefined;
  try {
    const target = parts.length ? `/proc/self/fd/${parent.fd}/${parts.at(-1)}` : `/proc/self/fd/${parent.fd}`;
    const s = parts.length ? await fs.lstat(target) : await parent.stat();
    return {
      size: s.size,
      mode: s.mode,
      uid: s.uid,
      gid: s.gid,
      isDirectory: s.isDirectory(),
      isFile: s.isFile(),
      isSymlink: s.isSymbolicLink(),
      mtimeMs: s.mtimeMs,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  } finally {
    await parent.close();
  }
}

/** The regular file at root/relative opened by the walk, with its stat, when it is at most maxBytes. */
async function openRegular(
  root: string,
  relative: string,
  maxBytes: number,
): Promise<{ handle: FileHandle; size: number; uid: number } | undefined> {
  const where = path.join(root, relative);
  const handle = await openWalk(root, relative, 'file');
  if (!handle) return undefined;
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw new UntrustedPathError(where, 'is not a regular file');
    if (s.size > maxBytes) throw new UntrustedPathError(where, `is ${s.size} bytes, more than the ${maxBytes} allowed`);
    return { handle, size: s.size, uid: s.uid };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The walk with the synchronous calls, for the small reads root makes by the
 * thousand (fleet reads three ref files per repo): each open is a few
 * microseconds in this thread instead of a trip through libuv's four-thread
 * pool, where a fleet of a thousand repos queued twenty thousand of them.
 * The same flags and refusals as openWalk. Folders opened on the way are
 * kept in `folders` (relative path -> descriptor; the caller closes them),
 * so files that share folders open each once.
 */
function openFileSync(root: string, relative: string, where: string, folders: Map<string, number>): number | undefined {
  const parts = components(relative, where);
  let dir = folders.get('');
  if (dir === undefined) {
    try {
      dir = openSync(root, c.O_RDONLY | c.O_DIRECTORY);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    folders.set('', dir);
  }
  for (let i = 0; i < parts.length; i++) {
    const isLast = i === parts.length - 1;
    const key = parts.slice(0, i + 1).join('/');
    const known = isLast ? undefined : folders.get(key);
    if (known !== undefined) {
      dir = known;
      continue;
    }
    const flags = c.O_RDONLY | c.O_NOFOLLOW | c.O_NONBLOCK | (isLast ? 0 : c.O_DIRECTORY);
    let next: number;
    try {
      next = openSync(`/proc/self/fd/${dir}/${parts[i]}`, flags);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      refused(where, error);
    }
    if (isLast) return next;
    folders.set(key, next);
    dir = next;
  }
  // No component: root itself, a folder, which is never a regular file.
  throw new UntrustedPathError(where, 'is not a regular file');
}

function readOpenedSync(fd: number, where: string, maxBytes: number): Promise<string> {
  try {
    const s = fstatSync(fd);
    if (!s.isFile()) throw new UntrustedPathError(where, 'is not a regular file');
    if (s.size > maxBytes) throw new UntrustedPathError(where, `is ${s.size} bytes, more than the ${maxBytes} allowed`);
    return readToBound((chunk) => readSync(fd, chunk, 0, chunk.length, null), s.size, maxBytes).then((bytes) => {
      if (bytes === 'grew')
        throw new UntrustedPathError(where, `grew past the ${maxBytes} bytes allowed while being read`);
      return bytes.toString('utf8');
    });
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

export async function readUntrustedFiles(
  root: string,
  relatives: readonly string[],
  maxBytes: number,
): Promise<(string | undefined)[]> {
  const folders = new Map<string, number>();
  try {
    const texts: (string | undefined)[] = [];
    for (const relative of relatives) {
      const where = path.join(root, relative);
      const fd = openFileSync(root, relative, where, folders);
      if (fd === undefined) {
        texts.push(undefined);
        continue;
      }
      try {
        texts.push(await readOpenedSync(fd, where, maxBytes));
      } finally {
        closeSync(fd);
      }
    }
    return texts;
  } finally {
    for (const fd of folders.values()) closeSync(fd);
  }
}

export async function readUntrusted(root: string, relative: string, maxBytes: number): Promise<string | undefined> {
  return (await readUntrustedFiles(root, [relative], maxBytes))[0];
}

export async function listUntrusted(root: string, relative: string, maxEntries: number): Promise<string[]> {
  const where = path.join(root, relative);
  const handle = await openWalk(root, relative, 'dir');
  if (!handle) return [];
  try {
    const names = await fs.readdir(`/proc/self/fd/${handle.fd}`);
    if (names.length > maxEntries)
      throw new UntrustedPathError(where, `has ${names.length} entries, more than the ${maxEntries} allowed`);
    return names;
  } finally {
    await handle.close();
  }
}

/**
 * Copies the regular file at root/relative, by the same walk, into `destination` (a new file, mode 0600), at most
 * maxBytes; the copy's size and the source's owner, or undefined when absent. The bytes are streamed: a bundle can be
 * larger than what is sensible to hold in memory.
 */
export async function copyUntrusted(
  root: string,
  relative: string,
  maxBytes: number,
  destination: string,
): Promise<{ readonly size: number; readonly uid: number } | undefined> {
  const where = path.join(root, relative);
  const opened = await openRegular(root, relative, maxBytes);
  if (!opened) return undefined;
  const { handle } = opened;
  try {
    const out = await fs.open(destination, c.O_WRONLY | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o600);
    let total = 0;
    try {
      const chunk = Buffer.allocUnsafe(1024 * 1024);
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > maxBytes)
          throw new UntrustedPathError(where, `grew past the ${maxBytes} bytes allowed while being read`);
        await out.write(chunk, 0, bytesRead);
      }
      await out.sync();
    } finally {
      await out.close();
    }
    return { size: total, uid: opened.uid };
  } finally {
    await handle.close();
  }
}
