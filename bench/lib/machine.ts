// Where a figure was measured: a benchmark number means little without it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface Machine {
  readonly date: string;
  readonly nproc: number;
  readonly cpu: string;
  readonly node: string;
  readonly git: string;
  readonly load: string;
}

export function describeMachine(): Machine {
  let cpu = 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown';
  } catch {
    // not Linux: leave it unknown
  }
  let load = 'unknown';
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  const git = execFileSync('git', ['--version'], { encoding: 'utf8' })
    .trim()
    .replace(/^git version /, '');
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    nproc: availableParallelism(),
    cpu,
    node: process.version,
    git,
    load,
  };
}

export function machineLine(machine: Machine): string {
  return `${machine.date} | nproc ${machine.nproc} | ${machine.cpu} | node ${machine.node} | git ${machine.git} | load avg ${machine.load}`;
}
