// Reads a provider key file for the broker: opened with O_NOFOLLOW (a link
// at the path is reported, never followed) and O_NONBLOCK (a FIFO cannot hang
// the broker), then described from the open file itself, so what is judged
// (src/broker/key.ts) is what was read. The directories above the file are
// root's (the registry names the path), so only the last component is guarded.
import { constants, open } from 'node:fs/promises';
import { KEY_FILE_MAX_BYTES } from '../../broker/key.js';
import type { KeyFileRead, KeySource } from '../../broker/types.js';

export const realKeySource: KeySource = {
  async read(path) {
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'missing' };
      if (code === 'ELOOP') return { kind: 'symlink' };
      throw error;
    }
    try {
      const stat = await handle.stat();
      let text: string | undefined;
      if (stat.isFile() && stat.size <= KEY_FILE_MAX_BYTES) {
        const buffer = Buffer.alloc(KEY_FILE_MAX_BYTES + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        text = bytesRead <= KEY_FILE_MAX_BYTES ? buffer.subarray(0, bytesRead).toString('utf8') : undefined;
      }
      const read: KeyFileRead = {
        kind: 'opened',
        isFile: stat.isFile(),
        mode: stat.mode,
        uid: stat.uid,
        links: stat.nlink,
        size: stat.size,
        text,
      };
      return read;
    } finally {
      await handle.close();
    }
  },
};
