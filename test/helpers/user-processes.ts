// Processes of a uid as the kernel sees them (real uid from /proc/PID/status),
// and processes a test starts and owns (ended by pid in teardown).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Test } from 'tap';
import { parseProcStatus } from '../../src/io/proc.js';

/** Live (non-zombie) processes whose real uid is `uid`: "pid name" each. */
export function processesOfUid(uid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue;
    }
    const parsed = parseProcStatus(status);
    if (parsed?.realUid !== uid || parsed.zombie) continue;
    found.push(`${entry} ${parsed.name}`);
  }
  return found;
}

/** Field 22 of /proc/PID/stat: with the pid, the process's identity. */
export function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** Starts `sleep 1000` (as `user` when given, via setpriv); killed by pid in teardown. */
export function startSleeper(t: Test, user?: string): number {
  const command = user
    ? ['setpriv', '--reuid', user, '--regid', user, '--init-groups', '--', 'sleep', '1000']
    : ['sleep', '1000'];
  const child = spawn(command[0]!, command.slice(1), { detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid!;
  t.teardown(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  return pid;
}

/** Whether `pid` runs (a zombie, exited and waiting to be collected, does not). */
export function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
