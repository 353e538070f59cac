// A real systemd booted as PID 1 of a container (systemd-nspawn), for unit
// tests that need restarts, cgroups and the journal. The root is a folder
// under /tmp that bind-mounts the host's /usr read-only and a copy of /etc
// (so users created on the host before exist inside). Always powered off and
// removed in teardown, pass or fail.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Test } from 'tap';

export interface Container {
  readonly root: string;
  readonly name: string;
  /** PID of the container's systemd, as the host sees it. */
  readonly pid: number;
  /** Runs a command inside the container (all namespaces of its PID 1). */
  exec(
    args: readonly string[],
    options?: { check?: boolean },
  ): { status: number | null; stdout: string; stderr: string };
  /**
   * `systemctl reboot` inside, then boots again on the same root (nspawn
   * exits 133 when its container reboots; systemd-nspawn@.service restarts
   * it on that code, this does the same). `pid` is the new systemd's after.
   */
  reboot(): Promise<void>;
}

const DROP_WANTS = /postgresql|squid|getty|timers|e2scrub|remote-fs/;

/** The units with /opt/agent-runner replaced by `installRoot`, written into `dir`, as provisioning installs them. */
export function unitsFor(dir: string, installRoot: string, projectRoot: string): void {
  for (const name of ['agent-runner-watch@.service', 'agent-runner-egress.service', 'agent-runner-proxy.service']) {
    writeFileSync(
      path.join(dir, name),
      readFileSync(path.join(projectRoot, 'systemd', name), 'utf8').replaceAll('/opt/agent-runner', installRoot),
    );
  }
}

function systemdIsAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'systemd';
  } catch {
    return false;
  }
}

function childPidOf(parent: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent && stat.includes('(systemd)')) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/**
 * Boots a container. `binds` are host paths mounted at the same path inside
 * (read-write); `bindsReadOnly` likewise, read-only. `prepare` may write into
 * root/etc before boot.
 */
export async function bootContainer(
  t: Test,
  options: { binds?: readonly string[]; bindsReadOnly?: readonly string[]; prepare?: (root: string) => void },
): Promise<Container> {
  const root = mkdtempSync('/tmp/agent-runner-nspawn-');
  // mkdtemp makes it 0700: as the container's "/", users other than root could not reach libc.
  chmodSync(root, 0o755);
  const name = `ar-${randomBytes(4).toString('hex')}`;
  const booted: { nspawn?: ChildProcess; rebooting?: Promise<void> } = {};
  let pid = 0;
  t.teardown(async () => {
    // A reboot still in flight (a failed or timed-out test) spawns the next nspawn: let it, then power that one off.
    await booted.rebooting?.catch(() => undefined);
    const nspawn = booted.nspawn;
    if (nspawn && nspawn.exitCode === null && nspawn.signalCode === null) {
      const exited = new Promise((resolve) => nspawn.once('exit', resolve));
      // SIGRTMIN+3 asks the container's systemd for a clean poweroff.
      try {
        nspawn.kill('SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => nspawn.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    // A SIGKILLed nspawn leaves its container's systemd running, reparented
    // to the host's init; killing that PID 1 ends its whole PID namespace.
    if (pid && systemdIsAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  for (const dir of ['usr', 'var', 'tmp', 'dev', 'proc', 'sys', 'run', 'root', 'home'])
    mkdirSync(path.join(root, dir), { recursive: true });
  for (const [link, target] of [
    ['bin', 'usr/bin'],
    ['lib', 'usr/lib'],
    ['lib64', 'usr/lib64'],
    ['sbin', 'usr/sbin'],
  ] as const) {
    if (existsSync(`/usr/${target.slice(4)}`)) symlinkSync(target, path.join(root, link));
  }
  cpSync('/etc', path.join(root, 'etc'), { recursive: true, verbatimSymlinks: true });
  // nspawn looks for os-release before /usr is mounted: make it a real file.
  rmSync(path.join(root, 'etc', 'os-release'), { force: true });
  writeFileSync(path.join(root, 'etc', 'os-release'), readFileSync('/etc/os-release'));
  writeFileSync(path.join(root, 'etc', 'machine-id'), `${randomBytes(16).toString('hex')}\n`);
  const systemDir = path.join(root, 'etc', 'systemd', 'system');
  for (const wants of readdirSync(systemDir).filter((entry) => entry.endsWith('.wants'))) {
    if (DROP_WANTS.test(wants)) {
      rmSync(path.join(systemDir, wants), { recursive: true, force: true });
      continue;
    }
    for (const unit of readdirSync(path.join(systemDir, wants)))
      if (DROP_WANTS.test(unit)) rmSync(path.join(systemDir, wants, unit), { force: true });
  }
  options.prepare?.(root);
  const args = [
    '-D',
    root,
    '--bind-ro=/usr',
    '--private-network',
    '--register=no',
    '--keep-unit',
    '-M',
    name,
    '--console=read-only',
    '-q',
  ];
  for (const bind of options.binds ?? []) args.push(`--bind=${bind}`);
  for (const bind of options.bindsReadOnly ?? []) args.push(`--bind-ro=${bind}`);
  args.push('-b');
  const exec: Container['exec'] = (command) => {
    const result = spawnSync('nsenter', ['-t', String(pid), '-a', ...command], { encoding: 'utf8', timeout: 120_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const boot = async () => {
    const nspawn = spawn('systemd-nspawn', args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' },
    });
    booted.nspawn = nspawn;
    let stderr = '';
    nspawn.stderr.on('data', (chunk) => (stderr += chunk));
    const deadline = Date.now() + 30_000;
    let found: number | undefined;
    while (!found) {
      if (Date.now() > deadline || nspawn.exitCode !== null) throw new Error(`the container did not boot: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      found = childPidOf(nspawn.pid!);
    }
    pid = found;
    // Ready when systemctl reaches PID 1 (its private socket). Not waiting for
    // "running": on some hosts dbus never settles in the container (inotify
    // limits), and nothing tested here needs it.
    let state = exec(['systemctl', 'is-system-running']);
    while (!/^(starting|running|degraded)/.test(state.stdout)) {
      if (Date.now() > deadline)
        throw new Error(`the container's systemd did not answer: ${state.stdout.trim()} ${state.stderr.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      state = exec(['systemctl', 'is-system-running']);
    }
  };
  await boot();
  const rebootOnce = async () => {
    const nspawn = booted.nspawn!;
    const exited = new Promise<number | null>((resolve) => {
      if (nspawn.exitCode !== null) resolve(nspawn.exitCode);
      else nspawn.once('exit', (code) => resolve(code));
    });
    const asked = exec(['systemctl', 'reboot']);
    if (asked.status !== 0) throw new Error(`systemctl reboot failed in the container: ${asked.stderr.trim()}`);
    const timer = setTimeout(() => nspawn.kill('SIGKILL'), 60_000);
    const code = await exited;
    clearTimeout(timer);
    if (code !== 133) throw new Error(`systemd-nspawn exited ${code} on reboot, not 133 (a reboot)`);
    await boot();
  };
  const reboot = () => {
    booted.rebooting = rebootOnce();
    return booted.rebooting;
  };
  return {
    root,
    name,
    get pid() {
      return pid;
    },
    exec,
    reboot,
  };
}
