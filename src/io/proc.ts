// Process control the core cannot do through ProcessPort: signalling groups it
// did not start (a crashed predecessor's agents) and subscribing to signals.
// Linux only: identity checks rely on /proc (see realProcess.startTimeOf).
import { open, readdir, readFile, readlink } from 'node:fs/promises';
import * as path from 'node:path';
import { realProcess } from './real-ports.js';
import type { ProcessControl, RepositoryProcess, StopSignal, UserProcess } from '../ports.js';
import { STARTED_BY_VARIABLE } from '../process-identity.js';

/** More of a process's environment than this is not read: a git the runner starts has a few hundred bytes. */
const MAX_ENVIRON_BYTES = 256 * 1024;

/** Pure: one variable of a /proc/PID/environ text (NUL-separated NAME=value entries). */
export function environValue(environ: string, name: string): string | undefined {
  const prefix = `${name}=`;
  return environ
    .split('\0')
    .find((entry) => entry.startsWith(prefix))
    ?.slice(prefix.length);
}

/** The first MAX_ENVIRON_BYTES of /proc/PID/environ; '' when it cannot be read (another user's, gone). */
async function readEnviron(pid: number): Promise<string> {
  const handle = await open(`/proc/${pid}/environ`, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const buffer = Buffer.alloc(MAX_ENVIRON_BYTES);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
      if (bytesRead === 0 || (total += bytesRead) >= buffer.length) break;
    }
    return buffer.subarray(0, total).toString('utf8');
  } catch {
    return '';
  } finally {
    await handle.close();
  }
}

/** Pure: state, process group and start time from the text of /proc/PID/stat (the name may hold spaces and ')'). */
export function parseProcStat(text: string): { pgid: number; startTime: string | undefined } | undefined {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const pgid = Number(fields[2]);
  if (!Number.isInteger(pgid)) return undefined;
  const exited = fields[0] === 'Z' || fields[0] === 'X';
  return { pgid, startTime: exited ? undefined : fields[19] };
}

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
    return { pid: process.pid, startTime: await realProcess.startTimeOf(process.pid), uid: process.getuid?.() ?? -1 };
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
  signalProcess(pid, signal) {
    if (!Number.isInteger(pid) || pid <= 1) return false;
    try {
      process.kill(pid, signal);
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
  async processesInRepository(files, dirs) {
    const wanted = new Set(files);
    const inDirs = (cwd: string) => dirs.some((dir) => cwd === dir || cwd.startsWith(`${dir}${path.sep}`));
    const found: RepositoryProcess[] = [];
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      // Another user's process (or one gone meanwhile) is not readable: it cannot be in this repository's lock files.
      const fds = wanted.size ? await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]) : [];
      let holding: string | undefined;
      for (const fd of fds) {
        const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
        if (wanted.has(target)) holding = target;
      }
      const working = inDirs(await readlink(`/proc/${entry}/cwd`).catch(() => ''));
      if (!holding && !working) continue;
      const status = parseProcStatus(await readFile(`/proc/${entry}/status`, 'utf8').catch(() => ''));
      const stat = parseProcStat(await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''));
      if (!status || !stat) continue; // gone meanwhile
      const name = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim();
      found.push({
        pid: Number(entry),
        name,
        startTime: stat.startTime,
        uid: status.realUid,
        pgid: stat.pgid,
        file: holding,
        inDirs: working,
        startedBy: environValue(await readEnviron(Number(entry)), STARTED_BY_VARIABLE),
      });
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
