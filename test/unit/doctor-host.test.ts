// doctor's host checks: /proc mount options, the registry's mode, and what contains a run.
import t from 'tap';
import { hidepidCheck, hidesOtherProcesses, mountOptions, registryModeCheck } from '../../backends/host/doctor-host.js';
import { containmentCheck } from '../../backends/host/doctor-limits.js';

const PLAIN =
  '22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n23 22 0:22 / /proc/sys/fs/binfmt_misc rw - binfmt_misc x rw\n';
const HIDDEN = `${PLAIN}90 22 0:50 / /proc rw,relatime - proc proc rw,hidepid=invisible,gid=4\n`;

t.test('mountinfo: the last mount on /proc counts', async (t) => {
  t.same(mountOptions(PLAIN, '/proc'), { mount: ['rw', 'nosuid', 'nodev', 'noexec', 'relatime'], super: ['rw'] });
  t.same(mountOptions(HIDDEN, '/proc')!.super, ['rw', 'hidepid=invisible', 'gid=4']);
  t.equal(mountOptions(PLAIN, '/nope'), undefined);
});

t.test('which hidepid values hide other users', async (t) => {
  for (const option of ['hidepid=2', 'hidepid=invisible', 'hidepid=4', 'hidepid=ptraceable'])
    t.ok(hidesOtherProcesses([option]), option);
  for (const option of ['hidepid=0', 'hidepid=off', 'hidepid=1', 'hidepid=noaccess', 'rw'])
    t.notOk(hidesOtherProcesses([option]), option);
});

t.test('the check, with the fix', async (t) => {
  const plain = await hidepidCheck({ readTextIfExists: async () => PLAIN });
  t.notOk(plain.ok);
  t.match(plain.detail, 'without hidepid');
  t.match(plain.fix, 'mount -o remount,hidepid=invisible /proc');
  t.match(plain.fix, 'proc /proc proc defaults,hidepid=invisible 0 0');
  t.match(plain.fix, /gid=/);
  t.match(plain.fix, /systemd-logind and polkit/);
  const hidden = await hidepidCheck({ readTextIfExists: async () => HIDDEN });
  t.ok(hidden.ok);
  t.equal(hidden.detail, '/proc is mounted with hidepid=invisible');
});

t.test('registry mode: root-only passes, anything wider fails with chmod 600', async (t) => {
  const stat = (mode: number, uid = 0) => ({
    stat: async () => ({ mode, uid, size: 1, isDirectory: false, mtimeMs: 0 }),
  });
  t.ok((await registryModeCheck(stat(0o100600), '/etc/r.toml')).ok);
  const open = await registryModeCheck(stat(0o100644), '/etc/r.toml');
  t.notOk(open.ok);
  t.equal(open.fix, 'chown root:root /etc/r.toml && chmod 600 /etc/r.toml');
  t.notOk((await registryModeCheck(stat(0o100640), '/etc/r.toml')).ok, 'group-readable fails too');
  t.notOk((await registryModeCheck(stat(0o100600, 1000), '/etc/r.toml')).ok, 'owned by someone else fails');
});

t.test('run containment: which one the host gives, and what each misses', async (t) => {
  const all = new Set(['systemd-run', 'systemctl', 'prlimit', 'kill', 'setpriv']);
  const scope = containmentCheck({ systemd: true, tools: all, controllers: new Set(['cpu', 'memory', 'pids', 'io']) });
  t.match(scope, { name: 'run containment', ok: true, containment: 'systemd-scope', fix: '' });
  t.match(
    scope.detail,
    /^systemd-scope: each run is a transient scope, a cgroup with TasksMax, MemoryMax and CPUWeight/,
  );
  t.match(scope.misses, /^nothing the run starts/);

  const bare = containmentCheck({ systemd: true, tools: all, controllers: new Set(['cpu']) });
  t.match(bare, { ok: true, containment: 'cgroup' });
  t.match(bare.misses, /the cgroup v2 controllers pids, memory are not enabled, so TasksMax, MemoryMax and CPUWeight/);
  t.match(
    containmentCheck({ systemd: true, tools: all, controllers: undefined }),
    { containment: 'cgroup', misses: /controllers pids, memory, cpu are not enabled/ },
    'no unified hierarchy at all',
  );

  const sweep = containmentCheck({
    systemd: false,
    tools: new Set(['prlimit', 'kill', 'setpriv']),
    controllers: undefined,
  });
  t.match(sweep, { ok: true, containment: 'user-sweep' });
  t.match(sweep.detail, /systemd is not PID 1, so no cgroup per run: rlimits .*SIGTERM, then SIGSTOP and SIGKILL/);
  t.match(sweep.misses, /a memory cap and CPU weight for the run as a whole/);
  t.match(sweep.misses, /a process asleep in the kernel .* is reported as a survivor/);
  t.match(sweep.detail, sweep.misses, 'the human line says what it misses too');

  const noKill = containmentCheck({ systemd: false, tools: new Set(['prlimit', 'setpriv']), controllers: undefined });
  t.match(noKill, { ok: false, containment: 'user-sweep', fix: /install procps \(kill\)/ });
  t.match(noKill.detail, /missing kill, so runs cannot be ended this way/);
});
