// Process control the core cannot do through ProcessPort: signalling groups it
// did not start (a crashed predecessor's agents) and subscribing to signals.
// Linux only: identity checks rely on /proc (see realProcess.startTimeOf).
import { readdir, readFile } from 'node:fs/promises';
import { realProcess } from './real-ports.js';
import type { ProcessControl, StopSignal, UserProcess } from '../ports.js';

/** Pure: the real uid, state and name from the text of /proc/PID/status. */
export function parseProcStatus(text: string): { realUid: number; zombie: boolean; name: string } | undefined {
  const uid = /^Uid:\s+(\d+)/m.exec(text);
  if (!uid) return undefined;
  return { realUid: Number(uid[1]), zombie: /^State:\s+Z/m.test(text), name: /^Name:\s*(.*)$/m.exec(text)?.[1] ?? '' };
}

export const realControl: ProcessControl = {
  async self() {
    return { pid: process.pid, startTime: await realProcess.startTimeOf(process.pid) };
  },
  signalGroup(pgid, signal) {
    if (!Number.isInteger(pgid) || pgid <= 1) return false;
    try {
      process.kill(-pgid, signal);
      return true;
    } catch {
      return false;
    }
  },
  async processesOfUser(uid) {
    const found: UserProcess[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let status: string;
      try {
        status = await readFile(`/proc/${entry}/status`, 'utf8');
      } catch {
        continue; // exited meanwhile
      }
      const parsed = parseProcStatus(status);
      if (parsed && parsed.realUid === uid) found.push({ pid: Number(entry), name: parsed.name, zombie: parsed.zombie });
    }
    return found;
  },
  onSignal(signal: StopSignal, handler: () => void) {
    process.on(signal, handler);
    return () => {
      process.off(signal, handler);
    };
  },
};
