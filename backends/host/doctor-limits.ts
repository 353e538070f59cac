// doctor's "run limits" layer: how a run of this repo is confined here (a
// transient scope with TasksMax/MemoryMax/CPUWeight when systemd is PID 1,
// rlimits otherwise), the values from the registry, and whether the tools and
// cgroup controllers that apply them are present.
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
  for (const tool of ['systemd-run', 'systemctl', 'prlimit', 'kill'])
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
