// Process control the core cannot do through ProcessPort: signalling groups it
// did not start (a crashed predecessor's agents) and subscribing to signals.
// Linux only: identity checks rely on /proc (see realProcess.startTimeOf).
import { readdir, readFile, readlink } from 'node:fs/promises';
import * as path from 'node:path';
import { realProcess } from './real-ports.js';
import type { ProcessControl, StopSignal, UserProcess } from '../ports.js';

/**
 * Pure: the real uid, state and name from the text of /proc/PID/status. A
 * zombie is a process whose threads have all exited: a leader that called
 * pthread_exit shows state Z while its other threads run on (Threads: 2 or
 * more), and that process is alive.
 */
export function parseProcStatus(text: string): { realUid: number; zombie: boolean; name: string } | undefined {
  const uid = /^Uid:\s+(\d+)/m.exec(text);
  if (!uid) return undefined;
  const threads = Number(/^Threads:\s+(\d+)/m.exec(text)?.[1] ?? 1);
  return {
    realUid: Number(uid[1]),
    zombie: /^State:\s+Z/m.test(text) && threads <= 1,
    name: /^Name:\s*(.*)$/m.exec(text)?.[1] ?? '',
  };
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
    // Read side by side: one after the other, a few hundred reads cost tens of milliseconds on a busy host.
    const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
    const statuses = await Promise.all(
      pids.map((pid) => readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined)), // undefined: exited meanwhile
    );
    const found: UserProcess[] = [];
    statuses.forEach((status, index) => {
      const parsed = status === undefined ? undefined : parseProcStatus(status);
      if (parsed && parsed.realUid === uid)
        found.push({ pid: Number(pids[index]), name: parsed.name, zombie: parsed.zombie });
    });
    return found;
  },
  async processesHolding(files, dirs) {
    const wanted = new Set(files);
    const inDirs = (cwd: string) => dirs.some((dir) => cwd === dir || cwd.startsWith(`${dir}${path.sep}`));
    const found: { pid: number; name: string; file: string | undefined }[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      const name = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim();
      // Another user's process (or one gone meanwhile) is not readable: it cannot be in this repository's lock files.
      const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
      let holding: string | undefined;
      for (const fd of fds) {
        const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
        if (wanted.has(target)) holding = target;
      }
      if (holding) found.push({ pid: Number(entry), name, file: holding });
      else if (name === 'git' && inDirs(await readlink(`/proc/${entry}/cwd`).catch(() => '')))
        found.push({ pid: Number(entry), name, file: undefined });
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
