// A process table for the recovery that ends what a gone run left in a repository: the processes a test describes
// (who started them, where they work, how they answer signals), the reads the real edge makes of them, every signal
// sent, and a clock that moves only when slept on.
import type { Clock, ProcessControl, ProcessPort, RepositoryProcess } from '../../src/ports.js';

export interface TableProcess extends Omit<RepositoryProcess, 'inDirs' | 'file' | 'startedBy'> {
  readonly inDirs?: boolean;
  readonly file?: string;
  readonly startedBy?: string;
  /** How it answers SIGTERM (SIGKILL always ends it): ends, or carries on. */
  readonly onTerm?: 'ends' | 'ignores';
  /** Ends by itself this many ms after the test starts. */
  readonly endsAfterMs?: number;
  /** Called when it ends (a git removes its lock file on SIGTERM). */
  readonly onEnd?: (how: 'SIGTERM' | 'SIGKILL' | 'itself') => void;
}

export interface FakeProcessTable {
  readonly clock: Clock;
  readonly process: Pick<ProcessPort, 'startTimeOf'>;
  readonly control: Pick<ProcessControl, 'self' | 'processesInRepository' | 'signalGroup' | 'signalProcess'>;
  /** Every signal sent, in order: "group 40 SIGTERM", "pid 41 SIGKILL". */
  readonly signals: string[];
  running(pid: number): boolean;
  /** Puts another process under `pid` (the old one is gone): a recycled pid. */
  recycle(pid: number, startTime: string): void;
}

export function aProcessTable(
  self: { pid: number; startTime: string; uid: number },
  processes: readonly TableProcess[],
): FakeProcessTable {
  let now = 0;
  const table = new Map(processes.map((process) => [process.pid, { ...process, alive: true }]));
  const signals: string[] = [];
  const end = (pid: number, how: 'SIGTERM' | 'SIGKILL' | 'itself') => {
    const process = table.get(pid);
    if (!process?.alive) return;
    process.alive = false;
    process.onEnd?.(how);
  };
  const tick = () => {
    for (const process of table.values())
      if (process.alive && process.endsAfterMs !== undefined && now >= process.endsAfterMs) end(process.pid, 'itself');
  };
  const deliver = (pid: number, signal: 'SIGTERM' | 'SIGKILL') => {
    const process = table.get(pid);
    if (!process?.alive) return false;
    if (signal === 'SIGKILL' || process.onTerm !== 'ignores') end(pid, signal);
    return true;
  };
  return {
    signals,
    clock: {
      now: () => now,
      sleep: async (ms) => {
        now += ms;
        tick();
      },
      setTimer: () => ({ cancel: () => undefined }),
    },
    process: {
      startTimeOf: async (pid) => {
        if (pid === self.pid) return self.startTime;
        const process = table.get(pid);
        return process?.alive ? process.startTime : undefined;
      },
    },
    control: {
      self: async () => self,
      processesInRepository: async (files) =>
        [...table.values()]
          .filter((process) => process.alive && (process.inDirs || (process.file && files.includes(process.file))))
          .map((process) => ({
            pid: process.pid,
            name: process.name,
            startTime: process.startTime,
            uid: process.uid,
            pgid: process.pgid,
            file: process.file,
            inDirs: process.inDirs ?? false,
            startedBy: process.startedBy,
          })),
      signalGroup(pgid, signal) {
        signals.push(`group ${pgid} ${signal}`);
        let any = false;
        for (const process of table.values()) if (process.pgid === pgid) any = deliver(process.pid, signal) || any;
        return any;
      },
      signalProcess(pid, signal) {
        signals.push(`pid ${pid} ${signal}`);
        return deliver(pid, signal);
      },
    },
    running: (pid) => table.get(pid)?.alive ?? false,
    recycle(pid, startTime) {
      const old = table.get(pid);
      if (!old) return;
      table.set(pid, { ...old, startTime, startedBy: undefined, inDirs: false, file: undefined, alive: true });
    },
  };
}
