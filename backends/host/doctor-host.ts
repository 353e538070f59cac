// doctor: host-wide settings that decide what one repo user can learn about
// the others: who can read the registry, and whether /proc shows other
// users' processes (their argv, environment names, cwd); and what contains
// a run's processes here (doctor-limits.ts).
import type { FsPort, ProcessPort } from '../../src/ports.js';
import type { Check } from './check.js';
import { checkContainment } from './doctor-limits.js';

/** The registry holds every repo's user, ports, allowlist and env: root only. */
export async function registryModeCheck(fs: Pick<FsPort, 'stat'>, file: string): Promise<Check> {
  const stat = await fs.stat(file);
  const ok = stat !== undefined && (stat.mode & 0o077) === 0 && stat.uid === 0;
  return {
    name: 'registry is readable by root only',
    ok,
    detail: stat ? `${file} mode ${(stat.mode & 0o777).toString(8)} uid ${stat.uid}` : `${file} does not exist`,
    fix: ok ? '' : `chown root:root ${file} && chmod 600 ${file}`,
  };
}

/** The superblock options of the mount at `mountPoint` in /proc/self/mountinfo text, or undefined. */
export function mountOptions(mountinfo: string, mountPoint: string): { mount: string[]; super: string[] } | undefined {
  let found: { mount: string[]; super: string[] } | undefined;
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root mount-point mount-options [optional...] - fstype source super-options
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    if (fields[4] !== mountPoint) continue;
    // The last mount on a point is the one in effect.
    found = { mount: (fields[5] ?? '').split(','), super: (right.split(' ')[2] ?? '').split(',') };
  }
  return found;
}

/** Whether these /proc options hide other users' processes (hidepid=2/invisible, or 4/ptraceable). */
export function hidesOtherProcesses(options: readonly string[]): boolean {
  return options.some((option) => /^hidepid=(2|invisible|4|ptraceable)$/.test(option));
}

const HIDEPID_FIX =
  'mount -o remount,hidepid=invisible /proc, and make it last with this /etc/fstab line: "proc /proc proc defaults,hidepid=invisible 0 0" ' +
  '(add gid=GROUP, e.g. hidepid=invisible,gid=monitoring, for monitoring users that must see every process; known caveat: systemd-logind and polkit ' +
  'need to see other processes: add their users to that group, or give systemd-logind SupplementaryGroups=GROUP in a drop-in)';

export async function hidepidCheck(fs: Pick<FsPort, 'readTextIfExists'>): Promise<Check> {
  const mountinfo = (await fs.readTextIfExists('/proc/self/mountinfo')) ?? '';
  const options = mountOptions(mountinfo, '/proc');
  const all = options ? [...options.mount, ...options.super] : [];
  const ok = hidesOtherProcesses(all);
  const hidepid = all.find((option) => option.startsWith('hidepid='));
  return {
    name: "/proc hides other users' processes",
    ok,
    detail: !options
      ? 'no /proc mount found'
      : ok
        ? `/proc is mounted with ${hidepid}`
        : `/proc is mounted ${hidepid ? `with ${hidepid}` : 'without hidepid'}: every repo user sees every other repo's processes and their arguments`,
    fix: ok ? '' : HIDEPID_FIX,
  };
}

export async function hostChecks(deps: { fs: FsPort; process: ProcessPort }, registryFile: string): Promise<Check[]> {
  return [await registryModeCheck(deps.fs, registryFile), await hidepidCheck(deps.fs), await checkContainment(deps)];
}
