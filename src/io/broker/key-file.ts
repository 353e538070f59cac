// Reads a provider key file for the broker: opened with O_NOFOLLOW (a link
// at the path is reported, never followed) and O_NONBLOCK (a FIFO cannot hang
// the broker), then described from the open file itself, so what is judged
// (src/broker/key.ts) is what was read. The directories above the file are
// root's (the registry names the path), so only the last component is guarded.
// Synchronous on purpose: it runs on every request (a rotated key is used at
// once), and four syscalls on a small local file cost microseconds, where four
// trips through libuv's thread pool cost a good part of the broker's budget.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { KEY_FILE_MAX_BYTES } from '../../broker/key.js';
import type { KeyFileRead, KeySource } from '../../broker/types.js';

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export function readKeyFile(path: string): KeyFileRead {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'symlink' };
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    let text: string | undefined;
    if (stat.isFile() && stat.size <= KEY_FILE_MAX_BYTES) {
      const buffer = Buffer.alloc(stat.size + 1);
      const bytesRead = readSync(fd, buffer, 0, buffer.length, 0);
      text = bytesRead <= KEY_FILE_MAX_BYTES ? buffer.subarray(0, bytesRead).toString('utf8') : undefined;
    }
    return {
      kind: 'opened',
      isFile: stat.isFile(),
      mode: stat.mode,
      uid: stat.uid,
      links: stat.nlink,
      size: stat.size,
      text,
    };
  } finally {
    closeSync(fd);
  }
}

export const realKeySource: KeySource = { read: async (path) => readKeyFile(path) };
