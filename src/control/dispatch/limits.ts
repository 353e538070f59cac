// Where a run's processes live and what they may use, as commands (pure).
//
// With systemd as PID 1 (/run/systemd/system exists) the dropped orchestrate
// command runs in a transient SCOPE, agent-runner-run-<repo>_<run>.scope,
// with TasksMax, MemoryMax and CPUWeight from the registry. A scope, not a
// transient service: systemd-run --scope registers the unit and then execs
// the command in place, so orchestrate stays dispatch's own child (its pid,
// its stdout and stderr pipes, its exit status and the parent-death signal
// all work as without systemd); a service would be started by PID 1, with
// its output in the journal and its exit status only through D-Bus. Every
// process the run starts, setsid or double-forked ones too, stays in the
// scope's cgroup; stopping the unit at the end ends them all. The scope also
// gets the watch unit's second egress lock (IPAddressDeny=any,
// IPAddressAllow=localhost): that is a cgroup setting, and the run's
// processes leave the watch unit's cgroup for the scope.
//
// Without systemd (containers, CI) the command runs under prlimit:
// RLIMIT_NPROC (counted per uid, which suits one user per repo) and
// RLIMIT_DATA, a per-process memory cap. RLIMIT_DATA rather than RLIMIT_AS:
// it counts memory a process can write, not address space it only reserves
// (V8, glibc arenas and Go reserve large PROT_NONE regions), so a cap that
// really bounds memory does not break node, git or bash. No CPU weight.
// The agent's and gate's commands are started by root's launcher, not by
// orchestrate, so they inherit neither the scope nor the rlimits: each is put
// under the same confinement (confineLaunched). Without systemd that is the
// same prlimit, so RLIMIT_NPROC counts the agent's uid against tasks_max as it
// counts the runner's. Under systemd the command joins the run's own scope
// (AttachProcessesToUnit, the D-Bus call for adding processes to a scope) before
// it execs, so no process of it is ever outside the scope and the scope's
// TasksMax and MemoryMax bound the whole run, whichever uid a process has.
// Either way, dispatch ends every process of the run's users when the run ends
// (user-sweep.ts).
import type { Command, RunLimits } from '../../types.js';
import type { FsPort } from '../../ports.js';
import { SYSTEM_PATH } from '../../system-path.js';

/** Present when systemd is PID 1 (sd_booted(3)). */
export const SYSTEMD_RUNTIME_DIR = '/run/systemd/system';

/** Whether systemd is PID 1 here (sd_booted(3): its runtime dir exists). */
export async function systemdIsRunning(fs: Pick<FsPort, 'stat'>): Promise<boolean> {
  return (await fs.stat(SYSTEMD_RUNTIME_DIR))?.isDirectory === true;
}

export type Confinement =
  | { readonly kind: 'systemd-scope'; readonly unit: string; readonly limits: RunLimits }
  | { readonly kind: 'rlimits'; readonly limits: RunLimits };

/**
 * The run's unit. "_" never occurs in a repo name (REPO_NAME_PATTERN), so
 * runUnitPattern(repo) matches this repo's runs and no other repo's.
 */
export function runUnitName(repo: string, runId: string): string {
  return `agent-runner-run-${repo}_${runId}.scope`;
}

/** Every run unit of a repo, as a systemctl glob. */
export function runUnitPattern(repo: string): string {
  return `agent-runner-run-${repo}_*.scope`;
}

/** Pure: how a run of `repo` is confined, given whether systemd is PID 1. */
export function confinementFor(systemd: boolean, repo: string, runId: string, limits: RunLimits): Confinement {
  return systemd ? { kind: 'systemd-scope', unit: runUnitName(repo, runId), limits } : { kind: 'rlimits', limits };
}

/** The unit properties of a run scope, in systemd-run's -p form. */
export function scopeProperties(limits: RunLimits): string[] {
  return [
    `TasksMax=${limits.tasksMax}`,
    `MemoryMax=${limits.memoryMax}`,
    `CPUWeight=${limits.cpuWeight}`,
    'IPAddressDeny=any',
    'IPAddressAllow=localhost',
    // systemd lets processes join only a delegated unit. The scope has no User=, so its cgroup stays root's: the
    // runner in it gains nothing by the delegation.
    'Delegate=yes',
  ];
}

/**
 * Pure: `command` (already dropped to the repo user: setpriv ...) run inside
 * the confinement. Both wrappers exec the command in place, so the pid
 * dispatch starts is the pid of setpriv and then orchestrate.
 */
export function confineCommand(command: Command, confinement: Confinement): Command {
  const { limits } = confinement;
  const wrapper =
    confinement.kind === 'systemd-scope'
      ? [
          'systemd-run',
          '--scope',
          `--unit=${confinement.unit}`,
          '--collect',
          '--quiet',
          ...scopeProperties(limits).flatMap((property) => ['-p', property]),
        ]
      : ['prlimit', `--nproc=${limits.tasksMax}:${limits.tasksMax}`, `--data=${limits.memoryMax}:${limits.memoryMax}`];
  return {
    ...command,
    program: wrapper[0]!,
    args: [...wrapper.slice(1), '--', command.program, ...command.args],
    env: { ...command.env, PATH: command.env.PATH ?? SYSTEM_PATH },
  };
}

/**
 * Attaches the shell itself ($$) to the unit named by $1, then execs the rest: the command starts inside the scope,
 * before it can fork. A fixed script; the unit and the command are arguments, never part of it.
 */
const JOIN_SCOPE_SCRIPT =
  'busctl call --quiet org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager ' +
  'AttachProcessesToUnit ssau "$1" "" 1 "$$" || exit 126; shift; exec "$@"';

/**
 * Pure: a command root's launcher starts for the run (already dropped to the agent or gate: setpriv ...), under the
 * run's confinement: the same rlimits, or inside the run's scope. If it cannot join the scope it does not run.
 */
export function confineLaunched(command: Command, confinement: Confinement): Command {
  if (confinement.kind === 'rlimits') return confineCommand(command, confinement);
  return {
    ...command,
    program: '/bin/sh',
    args: ['-c', JOIN_SCOPE_SCRIPT, 'sh', confinement.unit, command.program, ...command.args],
    env: { ...command.env, PATH: command.env.PATH ?? SYSTEM_PATH },
  };
}

/** Stops a run's unit (or every unit matching a pattern): systemd ends every process in it. */
export function stopUnitCommand(unitOrPattern: string): Command {
  return { program: 'systemctl', args: ['stop', '--quiet', '--', unitOrPattern], env: { PATH: SYSTEM_PATH }, cwd: '/' };
}
