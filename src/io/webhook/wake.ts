// The WakePort: inotify through fs.watch on the wake file's directory (a
// root-only state dir). An atomic write renames a temp file onto the name,
// which inotify reports with the name; a burst of events is one wake to the
// watcher, whose check runs once more at most. Platform limits it lives
// with: Linux inotify, a local filesystem (on NFS no event arrives and only
// the poll finds new work); a directory removed under the watch ends it
// (onError).
import { watch } from 'node:fs';
import * as path from 'node:path';
import type { WakePort } from '../../ports.js';

export const realWake: WakePort = {
  watch(file, onWake, onError) {
    const name = path.basename(file);
    const watcher = watch(path.dirname(file), { persistent: false }, (_event, changed) => {
      if (changed === name) onWake();
    });
    watcher.on('error', (error) => {
      watcher.close();
      onError(error);
    });
    return { close: () => watcher.close() };
  },
};
