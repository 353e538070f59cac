// doctor's "run limits" layer: how a run of this repo is confined here (a
// transient scope with TasksMax/MemoryMax/CPUWeight when systemd is PID 1,
// rlimits otherwise), the values from the registry, and whether the tools and
// cgroup controllers that apply them are present. And, for the host, which
// containment a run gets (a scope with cgroup limits, a scope that is only a
// cgroup, or only the user sweep) and what each misses.
import type { RegistryRepo } from '../../src/types.js';
import type { FsPort, ProcessPort } from '../../src/ports.js';
import { formatSize } from '../../src/control/registry/limits.js';
import { runUnitPattern, scopeProperties, systemdIsRunning } from '../../src/control/dispatch/limits.js';
import { ROOT_TOOLS_PATH } from '../../src/system-path.js';
import type { Check } from './check.js';

/** cgroup v2 controllers a run scope's limits need. */
const CONTROLLERS = ['pids', 'memory', 'cpu'] as const;

export interface LimitsFacts {
  readonly systemd: boolean;
  /** Tools found on the system PATH. */
  readonly tools: ReadonlySet<string>;
  /** Controllers of the unified cgroup hierarchy's root; undefined when there is none. */
  readonly controllers: ReadonlySet<string> | undefined;
}

async function readLimitsFacts(deps: { fs: FsPort; process: ProcessPort }): Promise<LimitsFacts> {
  const systemd = await systemdIsRunning(deps.fs);
  const tools = new Set<string>();
  for (const tool of ['systemd-run', 'systemctl', 'prlimit', 'kill', 'setpriv'])
    if (await deps.process.which(tool, ROOT_TOOLS_PATH)) tools.add(tool);
  const text = await deps.fs.readTextIfExists('/sys/fs/cgroup/cgroup.controllers').catch(() => undefined);
  return { systemd, tools, controllers: text === undefined ? undefined : new Set(text.trim().split(/\s+/)) };
}

/** Pure: the check from the facts and the repo's limits. */
function runLimitsCheck(repo: RegistryRepo, facts: LimitsFacts): Check {
  const { tasksMax, memoryMax, cpuWeight } = repo.limits;
  const name = 'run limits';
  const missing = (tools: readonly string[]) => tools.filter((tool) => !facts.tools.has(tool));
  const keys = `repos.${repo.name}.tasks_max / memory_max / cpu_weight`;
  if (facts.systemd) {
    const absentTools = missing(['systemd-run', 'systemctl', 'kill']);
    const absentControllers = facts.controllers
      ? CONTROLLERS.filter((controller) => !facts.controllers!.has(controller))
      : [...CONTROLLERS];
    const detail = `transient scope ${runUnitPattern(repo.name)} per run: ${scopeProperties(repo.limits).slice(0, 3).join(' ')} (${formatSize(memoryMax)} for the whole run)`;
    if (absentTools.length)
      return {
        name,
        ok: false,
        detail: `${detail}; missing ${absentTools.join(', ')}`,
        fix: 'install systemd and procps (provision/install-packages.sh)',
      };
    if (absentControllers.length) {
      return {
        name,
        ok: false,
        detail: `${detail}; the cgroup v2 controllers ${absentControllers.join(', ')} are not available, so those limits are not enforced`,
        fix: 'boot with the unified cgroup hierarchy (systemd.unified_cgroup_hierarchy=1) so systemd can enable pids, memory and cpu',
      };
    }
    return { name, ok: true, detail, fix: '' };
  }
  const absentTools = missing(['prlimit', 'kill']);
  const detail =
    `rlimits (systemd is not PID 1): RLIMIT_NPROC ${tasksMax} for the user, RLIMIT_DATA ${formatSize(memoryMax)} per process; ` +
    `cpu_weight ${cpuWeight} is not applied and the memory cap is per process only: under systemd each run gets its own cgroup (${keys})`;
  if (absentTools.length)
    return {
      name,
      ok: false,
      detail: `${detail}; missing ${absentTools.join(', ')}`,
      fix: 'install util-linux (prlimit) and procps (kill): provision/install-packages.sh',
    };
  return { name, ok: true, detail, fix: '' };
}

export async function checkRunLimits(deps: { fs: FsPort; process: ProcessPort }, repo: RegistryRepo): Promise<Check> {
  return runLimitsCheck(repo, await readLimitsFacts(deps));
}

/** What holds a run's processes together and ends them: doctor's name for it. */
export type Containment = 'systemd-scope' | 'cgroup' | 'user-sweep';

/** doctor's host line on containment, with the kind and what it misses as fields of their own for --json. */
export interface ContainmentCheck extends Check {
  readonly containment: Containment;
  readonly misses: string;
}

const SWEEP =
  'when the run ends, the user sweep ends every process of the repo user (SIGTERM, then SIGSTOP and SIGKILL as the user, until /proc shows none)';

/** Pure: the containment this host gives a run, from the facts. */
export function containmentCheck(facts: LimitsFacts): ContainmentCheck {
  const name = 'run containment';
  const absent = (tools: readonly string[]) => tools.filter((tool) => !facts.tools.has(tool));
  const missingControllers = facts.controllers
    ? CONTROLLERS.filter((controller) => !facts.controllers!.has(controller))
    : [...CONTROLLERS];
  let containment: Containment;
  let gives: string;
  let misses: string;
  if (facts.systemd && missingControllers.length === 0) {
    containment = 'systemd-scope';
    gives = `each run is a transient scope, a cgroup with TasksMax, MemoryMax and CPUWeight for the whole run, stopped when the run ends (systemd ends every process in it); then ${SWEEP}`;
    misses =
      'nothing the run starts: no process leaves its cgroup without privileges, and the limits hold for the run as a whole';
  } else if (facts.systemd) {
    containment = 'cgroup';
    gives = `each run is a transient scope, a cgroup stopped when the run ends (systemd ends every process in it); then ${SWEEP}`;
    misses = `the run's limits: the cgroup v2 controllers ${missingControllers.join(', ')} are not enabled, so TasksMax, MemoryMax and CPUWeight are not enforced (and under systemd no rlimits are set)`;
  } else {
    containment = 'user-sweep';
    gives = `systemd is not PID 1, so no cgroup per run: rlimits (RLIMIT_NPROC for the user, RLIMIT_DATA per process), and ${SWEEP}`;
    misses =
      "a memory cap and CPU weight for the run as a whole, the scope's IP filter (the nftables lock still holds), and ending anything before the run ends: what an agent starts lives until its run's sweep; a process asleep in the kernel (a hung NFS or FUSE call) dies only when it wakes, and is reported as a survivor";
  }
  const tools = absent(facts.systemd ? ['systemd-run', 'systemctl', 'kill', 'setpriv'] : ['kill', 'setpriv']);
  const detail = `${containment}: ${gives}; misses ${misses}`;
  if (tools.length)
    return {
      name,
      ok: false,
      detail: `${detail}; missing ${tools.join(', ')}, so runs cannot be ended this way`,
      fix: 'install procps (kill), util-linux (setpriv) and, with systemd, systemd itself: provision/install-packages.sh',
      containment,
      misses,
    };
  return { name, ok: true, detail, fix: '', containment, misses };
}

export async function checkContainment(deps: { fs: FsPort; process: ProcessPort }): Promise<ContainmentCheck> {
  return containmentCheck(await readLimitsFacts(deps));
}
