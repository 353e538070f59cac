// Every root-side command against one hostile repo user (test/helpers/hostile-repo.ts):
// links at the paths root touches, FIFOs, an oversized record, hostile git
// config and hooks, a forged agent record naming a root process, a port
// squatter, and control sequences in a task title. For each command: no
// planted program runs as root, no victim file changes, nothing lands in the
// root-owned dir, neither the other repo's token nor the root-only secret is
// printed or reaches the attacker's tree, the root process lives, no raw
// control character from agent text is printed, and the command ends (with
// success or an error) within its time limit.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { running } from '../helpers/user-processes.js';
import { BIN, controlFixture, type ControlFixture, type Finished } from '../helpers/control-fixture.js';
import { netns } from '../helpers/netns.js';
import {
  ANSI_TITLE,
  hostileKit,
  makeVictim,
  RAW_CONTROL,
  rootMarkers,
  typedMarkers,
  type Kit,
  type Victim,
} from '../helpers/hostile-repo.js';

const LIMIT_MS = 120_000;

/** A command as root, ended by pid if it outlives the limit (then `hung` is true). */
function runLimited(fixture: ControlFixture, args: readonly string[]): Promise<Finished & { hung: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(BIN, 'agent-runner'), ...args], {
      env: fixture.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let hung = false;
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      hung = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, hung });
    });
  });
}

/** The token anywhere in the attacker's home or clone (files, and the clone's whole history)? */
function tokenInAttackerTree(kit: Kit, victim: Victim): boolean {
  const files = spawnSync('grep', ['-r', '-l', '-a', '-F', '--', victim.token, kit.target.home, kit.target.clone], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const history = spawnSync(
    'git',
    [
      '-c',
      'safe.directory=*',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.fsmonitor=false',
      '-C',
      kit.target.clone,
      'log',
      '--all',
      '-p',
      '--no-ext-diff',
      '--no-textconv',
    ],
    {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' },
      timeout: 60_000,
    },
  );
  return files.stdout.trim() !== '' || history.stdout.includes(victim.token);
}

interface Case {
  readonly name: string;
  readonly args: (fixture: ControlFixture, ns: string) => string[];
  /** What else this command must get right against the kit. */
  readonly extra?: (t: Test, output: string) => void;
}

/** A lifecycle command as root: a clear refusal or the work done as the user, never a crash. */
const noCrash = (t: Test, output: string) => t.notMatch(output, /internal error/, 'no internal error');

const CASES: readonly Case[] = [
  { name: 'fleet --json', args: () => ['fleet', '--json'] },
  { name: 'fleet', args: () => ['fleet'] },
  { name: 'tui --once', args: () => ['tui', '--once'] },
  {
    name: 'doctor',
    args: (f, ns) => ['doctor', f.name, '--netns', ns],
    extra: (t, output) => {
      t.match(
        output,
        /FAIL gates script is executable: \S+\/\.agent\/config\.json is a symbolic link/,
        'the linked .agent/config.json is named, not read',
      );
      t.match(output, /FAIL squid owns the proxy port: /, 'a port Squid does not hold is never called a healthy proxy');
    },
  },
  {
    name: 'provision repo',
    args: (f, ns) => ['provision', 'repo', f.name, '--netns', ns],
    extra: (t, output) =>
      t.match(output, /\/backlog\/config\.yml is a symbolic link/, 'provision refuses, naming the link'),
  },
  { name: 'enqueue', args: (f) => ['enqueue', f.name, '--prompt', 'A hostile prompt'] },
  { name: 'status', extra: noCrash, args: (f) => ['status', '--workspace', f.clone, '--no-fetch'] },
  { name: 'promote', extra: noCrash, args: (f) => ['promote', '--workspace', f.clone] },
  { name: 'discard', extra: noCrash, args: (f) => ['discard', '--workspace', f.clone, '--yes'] },
  { name: 'gc', extra: noCrash, args: (f) => ['gc', '--workspace', f.clone, '--yes'] },
  { name: 'dispatch', args: (f) => ['dispatch', '--no-isolation', f.name] },
  { name: 'watch --once', args: (f) => ['watch', '--no-isolation', f.name, '--once'] },
];

t.test('every root-side command against a hostile repo', async (t) => {
  if (!systemTestMayRun(t, ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'perl', 'mkfifo'])) return;
  const ns = netns(t);
  const fixture = controlFixture(t, [
    { id: 'TASK-1', title: ANSI_TITLE, status: 'To Do' },
    { id: 'TASK-2', title: `Blocked ${ANSI_TITLE}`, status: 'Blocked' },
  ]);
  const home = path.join(path.dirname(fixture.probeOut), 'home');
  const victim = makeVictim(t);
  const kit = hostileKit(t, { user: fixture.user, home, clone: fixture.clone });
  const port = Number(/proxy_port = (\d+)/.exec(spawnSync('cat', [fixture.registry], { encoding: 'utf8' }).stdout)![1]);

  // The plants: every path root touches in the user's tree, and the rest of the kit.
  kit.hostileGitConfig({ filters: true });
  kit.link(path.join(fixture.clone, 'backlog', 'config.yml'), victim.credentials);
  kit.link(path.join(fixture.clone, 'backlog', 'tasks'), victim.rootDir);
  kit.link(path.join(fixture.clone, '.agent', 'config.json'), victim.rootOnlyFile);
  kit.link(path.join(fixture.clone, '.agent', 'gates.sh'), victim.rootOnlyFile);
  const workspaceState = kit.workspaceState(fixture.clone);
  kit.forgedAgentRecord(fixture.clone, victim.pid, 'TASK-1');
  kit.fifo(path.join(workspaceState, 'agents', 'TASK-3.json'));
  kit.link(path.join(workspaceState, 'agents', 'TASK-4.json'), victim.credentials);
  kit.oversized(path.join(workspaceState, 'agents', 'TASK-5.json'));
  kit.link(path.join(workspaceState, 'last-drain.json'), victim.credentials);
  kit.fifo(path.join(fixture.clone, '.git', 'agent-runner-drain.lock'));
  mkdirSync(path.join(home, '.agent-runner', 'workspaces', 'unrelated'), { recursive: true });
  kit.link(path.join(home, '.agent-runner', 'workspaces', 'unrelated', 'agents'), victim.rootDir);
  spawnSync('chown', ['-R', '-h', `${fixture.user}:${fixture.user}`, path.join(home, '.agent-runner')]);
  chmodSync(home, 0o700);
  // The proxy port is privileged: the repo user cannot even squat it.
  const squat = await kit.squatPorts([port], ['ip', 'netns', 'exec', ns.name]).then(
    () => 'bound',
    (error: Error) => error.message,
  );
  t.match(squat, /bind \d+: Permission denied/, 'the repo user cannot bind its proxy port');
  const victimBefore = victim.snapshot();

  for (const testCase of CASES) {
    t.test(testCase.name, async (t) => {
      const result = await runLimited(fixture, testCase.args(fixture, ns.name));
      const output = result.stdout + result.stderr;
      if (process.env.HOSTILE_DEBUG)
        process.stderr.write(`\n===== ${testCase.name} (exit ${result.code})\n${output.slice(0, 3000)}\n`);
      t.equal(result.hung, false, `ends within ${LIMIT_MS / 1000} s`);
      t.ok(result.code === 0 || output.trim() !== '', 'succeeds, or says why it failed', {
        output: output.slice(-1500),
      });
      t.same(
        rootMarkers(kit).map((marker) => marker.label),
        [],
        'no planted program ran as root',
      );
      t.same(
        typedMarkers(kit).map((marker) => marker.label),
        [],
        'no planted program reached a terminal',
      );
      t.same(victim.snapshot(), victimBefore, 'no victim file changed and the root-owned dir got no file');
      t.notMatch(output, victim.token, "the other repo's token is not in the output");
      t.notMatch(output, victim.rootSecret, 'the root-only file is not in the output');
      t.equal(tokenInAttackerTree(kit, victim), false, "the token is not in the attacker's tree");
      t.equal(running(victim.pid), true, 'the root process named by the forged record lives');
      t.notMatch(output, RAW_CONTROL, 'no raw control character from agent text');
      testCase.extra?.(t, output);
    });
  }
});
