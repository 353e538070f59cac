// The run-limit builders and parsers, and the one process-identity rule.
import t from 'tap';
import {
  confineCommand,
  confineLaunched,
  confinementFor,
  runUnitName,
  runUnitPattern,
  stopUnitCommand,
} from '../../src/control/dispatch/limits.js';
import {
  formatSize,
  parseSize,
  readRunLimit,
  resolveRunLimits,
  RUN_LIMIT_DEFAULTS,
  type RunLimitFields,
} from '../../src/control/registry/limits.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { upsertRepo } from '../../src/control/registry/edit.js';
import { describeSweep, endUserProcesses, signalEveryProcessAsUser } from '../../src/control/dispatch/user-sweep.js';
import { isSameProcess, stillRunning } from '../../src/process-identity.js';
import { stateDirProblems } from '../../src/control/state-dirs.js';
import { parseProcessRecord } from '../../src/drain/recovery/process-records.js';
import { parseProcStatus } from '../../src/io/proc.js';
import type { Command } from '../../src/types.js';
import type { UserProcess } from '../../src/ports.js';
import { cronScheduler } from '../../src/io/cron.js';

const limits = { tasksMax: 40, memoryMax: 2 * 1024 ** 3, cpuWeight: 50 };
const dropped: Command = {
  program: 'setpriv',
  args: ['--reuid=1001', '--', '/usr/bin/env', '-i', 'HOME=/h', 'node', 'main.js'],
  env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
  cwd: '/srv/web',
};

t.test('under systemd: a transient scope with the limits, execing the dropped command', async (t) => {
  const confinement = confinementFor(true, 'web', '20261129T143000Z-1a2b3c', limits);
  t.same(confinement, { kind: 'systemd-scope', unit: 'agent-runner-run-web_20261129T143000Z-1a2b3c.scope', limits });
  t.same(confineCommand(dropped, confinement), {
    program: 'systemd-run',
    args: [
      '--scope',
      '--unit=agent-runner-run-web_20261129T143000Z-1a2b3c.scope',
      '--collect',
      '--quiet',
      '-p',
      'TasksMax=40',
      '-p',
      'MemoryMax=2147483648',
      '-p',
      'CPUWeight=50',
      '-p',
      'IPAddressDeny=any',
      '-p',
      'IPAddressAllow=localhost',
      '-p',
      'Delegate=yes',
      '--',
      'setpriv',
      '--reuid=1001',
      '--',
      '/usr/bin/env',
      '-i',
      'HOME=/h',
      'node',
      'main.js',
    ],
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    cwd: '/srv/web',
  });
  t.same(stopUnitCommand('agent-runner-run-web_R.scope'), {
    program: 'systemctl',
    args: ['stop', '--quiet', '--', 'agent-runner-run-web_R.scope'],
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    cwd: '/',
  });
});

t.test('without systemd: prlimit with per-uid tasks and a per-process data cap', async (t) => {
  const confinement = confinementFor(false, 'web', 'R', limits);
  t.same(confinement, { kind: 'rlimits', limits });
  const command = confineCommand(dropped, confinement);
  t.equal(command.program, 'prlimit');
  t.same(command.args.slice(0, 4), ['--nproc=40:40', '--data=2147483648:2147483648', '--', 'setpriv']);
  t.same(command.args.slice(3), [dropped.program, ...dropped.args], 'the dropped command unchanged after --');
  t.equal(command.cwd, dropped.cwd);
});

t.test(
  "what root's launcher starts gets the run's confinement: the same rlimits, or it joins the run's scope",
  async (t) => {
    const rlimits = confinementFor(false, 'web', 'R', limits);
    t.same(confineLaunched(dropped, rlimits), confineCommand(dropped, rlimits), 'the same prlimit as orchestrate');
    const scope = confinementFor(true, 'web', 'R', limits);
    const joined = confineLaunched(dropped, scope);
    t.equal(joined.program, '/bin/sh');
    t.equal(joined.args[0], '-c');
    t.match(joined.args[1], /AttachProcessesToUnit ssau "\$1" "" 1 "\$\$" \|\| exit 126; shift; exec "\$@"$/);
    t.same(
      joined.args.slice(2),
      ['sh', 'agent-runner-run-web_R.scope', dropped.program, ...dropped.args],
      'the unit and the dropped command are arguments, never script text',
    );
    t.equal(joined.cwd, dropped.cwd);
  },
);

t.test("a repo's unit pattern never matches another repo's runs", async (t) => {
  const pattern = new RegExp(`^${runUnitPattern('web').replace('.', '\\.').replace('*', '.*')}$`);
  t.match(runUnitName('web', '20261129T143000Z-1a2b3c'), pattern);
  t.notMatch(runUnitName('web-1', '20261129T143000Z-1a2b3c'), pattern, 'repo "web-1" is not "web"');
  t.notMatch(runUnitName('web-api', '2026'), pattern);
});

t.test('limit keys: sizes, ranges, defaults', async (t) => {
  t.equal(parseSize('8G'), 8 * 1024 ** 3);
  t.equal(parseSize('512M'), 512 * 1024 ** 2);
  t.equal(parseSize('1.5G'), 1.5 * 1024 ** 3);
  t.equal(parseSize('2GiB'), 2 * 1024 ** 3);
  t.equal(parseSize(1048576), 1048576);
  for (const bad of ['', 'lots', '-1G', '8X', 1.5, -3, true]) t.equal(parseSize(bad), undefined, JSON.stringify(bad));
  t.equal(formatSize(8 * 1024 ** 3), '8G');
  t.equal(formatSize(1536 * 1024 ** 2), '1536M');
  t.equal(formatSize(1000), '1000');
  const fields: RunLimitFields = {};
  const problems: string[] = [];
  const bad = (problem: string) => problems.push(problem);
  readRunLimit('tasks_max', 64, fields, bad);
  readRunLimit('memory_max', '1G', fields, bad);
  readRunLimit('cpu_weight', 200, fields, bad);
  t.same(fields, { tasksMax: 64, memoryMax: 1024 ** 3, cpuWeight: 200 });
  t.same(problems, []);
  readRunLimit('tasks_max', 5, {}, bad);
  readRunLimit('memory_max', '10M', {}, bad);
  readRunLimit('cpu_weight', 0, {}, bad);
  t.same(problems, [
    'must be an integer 32-4194304, got 5',
    '"10M" is below the 256M an agent needs',
    'must be an integer 1-10000, got 0',
  ]);
  t.same(resolveRunLimits({ tasksMax: 64 }, { tasksMax: 100, cpuWeight: 10 }), {
    tasksMax: 64,
    memoryMax: RUN_LIMIT_DEFAULTS.memoryMax,
    cpuWeight: 10,
  });
});

t.test('the registry reports bad limits with line and fix, and keeps them through an upsert', async (t) => {
  const text =
    '[defaults]\ntasks_max = 10\n\n[repos.web]\npath = "/srv/web"\nproxy_port = 700\nmemory_max = "huge"\ncpu_weight = 100\n';
  const { problems } = parseRegistry(text, '/r.toml', cronScheduler);
  t.same(
    problems.map((problem) => `${problem.file} ${problem.key}`),
    ['/r.toml:2 defaults.tasks_max', '/r.toml:7 repos.web.memory_max'],
  );
  t.match(problems[1]!.fix, 'memory_max = "8G"');
  const good = '[repos.web]\npath = "/srv/web"\nproxy_port = 700\ntasks_max = 64\nmemory_max = "2G"\n';
  const updated = upsertRepo(good, {
    name: 'web',
    path: '/srv/web',
    proxyPort: 700,
    limits: { tasks_max: 64, memory_max: '2G' },
  });
  t.match(updated, 'tasks_max = 64\nmemory_max = "2G"');
  t.same(parseRegistry(updated, '/r.toml', cronScheduler).registry.repos[0]!.limits, {
    tasksMax: 64,
    memoryMax: 2 * 1024 ** 3,
    cpuWeight: 100,
  });
});

t.test('one process-identity rule', async (t) => {
  t.equal(isSameProcess({ pid: 5, startTime: '7' }, '7'), true);
  t.equal(isSameProcess({ pid: 5, startTime: '7' }, '8'), false, 'a recycled pid is another process');
  t.equal(isSameProcess({ pid: 5, startTime: '7' }, undefined), false, 'gone');
  t.equal(isSameProcess({ pid: 5, startTime: undefined }, '7'), false, 'a record without a start time proves nothing');
  t.equal(isSameProcess({ pid: 5, startTime: undefined }, undefined), false);
  const times = new Map([[5, '7']]);
  const port = { startTimeOf: async (pid: number) => times.get(pid) };
  t.equal(await stillRunning(port, { pid: 5, startTime: '7' }), true);
  t.equal(await stillRunning(port, { pid: 6, startTime: '7' }), false);
  t.equal(await stillRunning(port, { pid: -1, startTime: '7' }), false, 'never a group or "every process"');
});

t.test('the user sweep: kill -1 as the user, TERM then KILL, survivors from /proc', async (t) => {
  t.same(signalEveryProcessAsUser({ uid: 1001, gid: 1002 }, 'TERM'), {
    program: 'setpriv',
    args: [
      '--reuid=1001',
      '--regid=1002',
      '--init-groups',
      '--no-new-privs',
      '--',
      '/usr/bin/env',
      '-i',
      'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
      'kill',
      '-TERM',
      '--',
      '-1',
    ],
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    cwd: '/',
  });
  t.throws(() => signalEveryProcessAsUser({ uid: 0, gid: 0 }, 'KILL'), /refusing/, 'never as root');

  // A fake host: TERM ends what does not ignore it; STOP freezes; KILL ends everything. A "hopper" (a process that
  // forks and exits in a loop) is never where a scan looks unless it is stopped.
  const run = (processes: UserProcess[], ignoresTerm: Set<number>, hoppers: Set<number> = new Set()) => {
    let now = 0;
    const sent: string[] = [];
    let alive = [...processes];
    const stopped = new Set<number>();
    const deps = {
      clock: { now: () => now, sleep: async (ms: number) => void (now += ms), setTimer: () => ({ cancel() {} }) },
      control: {
        processesOfUser: async (uid: number) =>
          uid === 1001 ? alive.filter((entry) => !hoppers.has(entry.pid) || stopped.has(entry.pid)) : [],
      },
      process: {
        run: async (command: Command) => {
          const signal = command.args.at(-3)!;
          sent.push(signal);
          if (signal === '-STOP') for (const entry of alive) stopped.add(entry.pid);
          else
            alive = alive.filter(
              (entry) => entry.zombie || (signal === '-TERM' && (ignoresTerm.has(entry.pid) || stopped.has(entry.pid))),
            );
          return { exitCode: 0, signal: null, stdout: '', stderr: '' };
        },
      },
    };
    return { deps, sent, alive: () => alive.filter((entry) => !entry.zombie) };
  };
  const user = { uid: 1001, gid: 1001 };
  const none = run([], new Set());
  t.same(await endUserProcesses(none.deps, user, 1000), { found: 0, termed: false, killed: false, survivors: [] });
  t.same(none.sent, ['-STOP'], 'nothing seen: no SIGTERM, but the uid is still frozen and read again');
  const polite = run(
    [
      { pid: 10, name: 'sleep', zombie: false },
      { pid: 11, name: 'x', zombie: true },
    ],
    new Set(),
  );
  t.same(
    await endUserProcesses(polite.deps, user, 1000),
    { found: 1, termed: true, killed: false, survivors: [] },
    'a zombie is not a leftover',
  );
  t.same(polite.sent, ['-TERM', '-STOP'], 'all gone after SIGTERM: the frozen uid shows none, no SIGKILL');
  const stubborn = run(
    [
      { pid: 10, name: 'sleep', zombie: false },
      { pid: 12, name: 'daemon', zombie: false },
    ],
    new Set([12]),
  );
  const result = await endUserProcesses(stubborn.deps, user, 1000);
  t.same(result, { found: 2, termed: true, killed: true, survivors: [] });
  t.same(stubborn.sent, ['-TERM', '-STOP', '-KILL']);
  t.equal(describeSweep(result), 'ended 2 leftover processes of the user with SIGTERM, then SIGSTOP and SIGKILL');
  const hopper = run([{ pid: 20, name: 'sh', zombie: false }], new Set([20]), new Set([20]));
  const hopped = await endUserProcesses(hopper.deps, user, 1000);
  t.same(hopper.alive(), [], 'a process no scan sees still ends');
  t.same(hopped, { found: 1, termed: false, killed: true, survivors: [] }, 'counted once frozen');
  t.equal(describeSweep(hopped), 'ended 1 leftover process of the user with SIGSTOP and SIGKILL');
  t.equal(
    describeSweep({ found: 1, termed: true, killed: true, survivors: [{ pid: 9, name: 'x', zombie: false }] }),
    'ended 1 leftover process of the user with SIGTERM, then SIGSTOP and SIGKILL; still running: 9 (x)',
  );

  // What SIGKILL cannot end at once (a process asleep in the kernel): rounds until the bound, then reported.
  const stuck = run([{ pid: 30, name: 'fuse-wait', zombie: false }], new Set([30]));
  const stuckDeps = {
    ...stuck.deps,
    process: {
      run: async (command: Command) => {
        stuck.sent.push(command.args.at(-3)!);
        return { exitCode: 0, signal: null, stdout: '', stderr: '' };
      },
    },
  };
  const stuckResult = await endUserProcesses(stuckDeps, user, 1000);
  t.same(stuckResult.survivors, [{ pid: 30, name: 'fuse-wait', zombie: false }]);
  t.ok(stuck.sent.filter((signal) => signal === '-KILL').length >= 3, `SIGKILL again each round (${stuck.sent})`);
  t.ok(stuck.deps.clock.now() <= 1000 + 10_000 + 3_000, 'within the bound');

  // A kill that cannot run is said, not taken for success.
  const broken = run([{ pid: 40, name: 'sleep', zombie: false }], new Set());
  const brokenResult = await endUserProcesses(
    {
      ...broken.deps,
      process: { run: async () => ({ exitCode: 127, signal: null, stdout: '', stderr: "env: 'kill': No such file" }) },
    },
    user,
    100,
  );
  t.same(brokenResult.survivors, [{ pid: 40, name: 'sleep', zombie: false }]);
  t.match(
    describeSweep(brokenResult),
    /still running: 40 \(sleep\); could not signal the user's processes: kill -TERM -1 as uid 1001 exited 127: env: 'kill': No such file/,
  );
});

t.test('/proc status: the REAL uid decides', async (t) => {
  t.same(parseProcStatus('Name:\tsleep\nState:\tS (sleeping)\nUid:\t1001\t0\t0\t0\n'), {
    realUid: 1001,
    zombie: false,
    name: 'sleep',
  });
  t.same(parseProcStatus('Name:\tsh\nState:\tZ (zombie)\nUid:\t0\t1001\t1001\t1001\n'), {
    realUid: 0,
    zombie: true,
    name: 'sh',
  });
  t.equal(parseProcStatus('garbage'), undefined);
  // A leader that called pthread_exit: state Z, its other threads run on. Alive.
  t.match(parseProcStatus('Name:\tpython3\nState:\tZ (zombie)\nUid:\t1001\t1001\t1001\t1001\nThreads:\t2\n'), {
    zombie: false,
  });
  t.match(parseProcStatus('Name:\tsh\nState:\tZ (zombie)\nUid:\t1001\t1001\t1001\t1001\nThreads:\t1\n'), {
    zombie: true,
  });
});

t.test('agent records: one validation for every reader', async (t) => {
  t.same(parseProcessRecord('TASK-3.json', '{"pid":123,"startTime":"456","taskId":"TASK-3"}', '/f'), {
    pid: 123,
    startTime: '456',
    kind: 'agent',
    taskId: 'TASK-3',
    file: '/f',
  });
  t.same(parseProcessRecord('TASK-3.json', '{"pid":123}', '/f'), {
    pid: 123,
    startTime: undefined,
    kind: 'agent',
    taskId: 'TASK-3',
    file: '/f',
  });
  t.same(parseProcessRecord('gate.json', '{"pid":124,"startTime":"9","kind":"gate","taskId":"TASK-3"}', '/g'), {
    pid: 124,
    startTime: '9',
    kind: 'gate',
    taskId: 'TASK-3',
    file: '/g',
  });
  t.equal(
    parseProcessRecord('gate.json', '{"pid":124,"kind":"gate"}', '/g'),
    undefined,
    'a gate record names the task it gates',
  );
  t.equal(
    parseProcessRecord('x.json', '{"pid":124,"kind":"rm -rf","taskId":"TASK-3"}', '/g')?.kind,
    'agent',
    'an unknown kind is an agent (displayed, never trusted)',
  );
  for (const [name, text] of [
    ['TASK-3.json', '{"pid":1,"startTime":"4"}'],
    ['TASK-3.json', '{"pid":-5,"startTime":"4"}'],
    ['TASK-3.json', '{"pid":"12","startTime":"4"}'],
    ['TASK-3.json', '{"pid":12,"taskId":"\\u001b[31mred"}'],
    ['TASK-3.json', 'null'],
    ['TASK-3.json', '{"pid":12'],
    ['TASK-3.tmp', '{"pid":12}'],
  ] as const) {
    t.equal(parseProcessRecord(name, text, '/f'), undefined, `${name}: ${text}`);
  }
  t.equal(
    parseProcessRecord('T.json', '{"pid":12,"startTime":"4; rm"}', '/f')?.startTime,
    undefined,
    'a start time is digits',
  );
});

t.test('state dir modes', async (t) => {
  const dir = (path: string, mode: number, uid = 0) => ({ path, mode: 0o40000 | mode, uid });
  t.same(stateDirProblems(dir('/s', 0o750), [dir('/s/repos', 0o700), dir('/s/repos/web', 0o700)]), []);
  t.same(stateDirProblems(dir('/s', 0o755), [dir('/s/repos/web', 0o755), dir('/s/repos/api', 0o700, 1001)]), [
    '/s is open to every user (mode 0755)',
    '/s/repos/web is open to other users (mode 0755)',
    '/s/repos/api belongs to uid 1001, not root',
  ]);
  t.same(stateDirProblems(dir('/s', 0o770), []), ['/s is group-writable (mode 0770)']);
  t.same(stateDirProblems(undefined, []), []);
});
