// CPU time (user + system) of a command and every descendant it waited for,
// via GNU time. On a busy machine wall time swings with other people's load;
// CPU time says how much work a run did, so the ratio of CPU times is the
// steadier measure of the control plane's own cost.
import { existsSync, readFileSync, rmSync } from 'node:fs';

const GNU_TIME = '/usr/bin/time';

export interface CpuTime {
  readonly user: number;
  readonly system: number;
}

export function canMeasureCpu(): boolean {
  return existsSync(GNU_TIME);
}

/** argv that runs `argv` under GNU time, writing the usage to `report`; unchanged when GNU time is missing. */
export function underTime(argv: readonly string[], report: string): { program: string; args: string[] } {
  if (!canMeasureCpu()) return { program: argv[0]!, args: argv.slice(1) };
  return { program: GNU_TIME, args: ['-f', '%U %S', '-o', report, ...argv] };
}

/** The usage GNU time wrote, or undefined when it did not run. */
export function readCpu(report: string): CpuTime | undefined {
  if (!existsSync(report)) return undefined;
  const text = readFileSync(report, 'utf8').trim().split('\n').at(-1) ?? '';
  rmSync(report, { force: true });
  const [user, system] = text.split(' ').map(Number);
  if (user === undefined || system === undefined || Number.isNaN(user) || Number.isNaN(system)) return undefined;
  return { user, system };
}

export function cpuSeconds(cpu: CpuTime): number {
  return cpu.user + cpu.system;
}
