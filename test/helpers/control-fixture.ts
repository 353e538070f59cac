// A registered repo for control-plane system tests: a real Linux user that
// owns a drain fixture (bare origin + clone with a board), a command agent
// script that proves the privilege drop (it writes `id` and `env`), a
// registry and a state dir. Everything is removed when the test ends.
import { accountComment, identityComment } from '../../src/control/repo-user/account.js';
import { handoffDirs, handoffRoot, identityNames } from '../../src/identities.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { tmpdir } from 'node:os';
import type { Test } from 'tap';
import { drainFixture, PROJECT_ROOT, type FixtureTask } from './drain-fixture.js';
import { tempDir } from './temp.js';

export const BIN = path.join(PROJECT_ROOT, 'bin');

/** The agent: records who it runs as, optionally waits, marks its task Done and commits. */
export function probeAgent(probeOut: string): string {
  return `#!/bin/sh
set -e
PROBE_OUT='${probeOut}'
id > "$PROBE_OUT/id-$AGENT_TASK_ID"
env > "$PROBE_OUT/env-$AGENT_TASK_ID"
echo $$ > "$PROBE_OUT/pid-$AGENT_TASK_ID"
# "hold": wait while it exists; "freeze": sleep for good (until killed).
while [ -e "$PROBE_OUT/hold" ]; do sleep 0.2; done
if [ -e "$PROBE_OUT/freeze" ]; then sleep 300; fi
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
echo "$AGENT_TASK_ID" >> done.txt
git add -A
git -c user.name=probe -c user.email=probe@example.invalid commit -q -m "$AGENT_TASK_ID done"
`;
}

export interface ControlFixture {
  readonly name: string;
  readonly user: string;
  readonly clone: string;
  readonly origin: string;
  readonly state: string;
  readonly registry: string;
  /** Where the probe agent writes (world-writable). */
  readonly probeOut: string;
  readonly env: Record<string, string>;
}

let counter = 0;

/** A repo user as provisioning makes it: marked as agent-runner's, for `repo`. */
export function createUser(t: Test, name: string, home: string, repo: string, comment = accountComment(repo)): void {
  execFileSync(
    'useradd',
    ['--home-dir', home, '--create-home', '--shell', '/usr/sbin/nologin', '--user-group', '--comment', comment, name],
    { stdio: 'pipe' },
  );
  t.teardown(() => {
    // As the user itself: kill(-1) from its uid reaches only its own processes.
    try {
      execFileSync(
        'setpriv',
        [`--reuid=${name}`, `--regid=${name}`, '--init-groups', '--', 'kill', '-KILL', '--', '-1'],
        { stdio: 'ignore' },
      );
    } catch {
      // nothing left running
    }
    execFileSync('userdel', ['--remove', name], { stdio: 'ignore' });
  });
}

/**
 * The agent and gate of a repo whose runner `user` (home `home`) exists, and the hand-off folders, as provisioning
 * makes them (homes beside the runner's: `<home>-agent`, `<home>-gate`). Removed when the test ends.
 */
export function createRepoIdentities(t: Test, user: string, home: string, repo: string): void {
  const names = identityNames(user);
  createUser(t, names.agent, `${home}-agent`, repo, identityComment(repo, 'agent'));
  createUser(t, names.gate, `${home}-gate`, repo, identityComment(repo, 'gate'));
  for (const dir of [`${home}-agent`, `${home}-gate`]) chmodSync(dir, 0o700);
  const root = handoffRoot(home);
  const dirs = handoffDirs(root);
  mkdirSync(root, { mode: 0o755 });
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [dir, owner] of [
    [dirs.toAgent, `${user}:${names.agent}`],
    [dirs.fromAgent, `${names.agent}:${user}`],
    [dirs.toGate, `${user}:${names.gate}`],
  ] as const) {
    mkdirSync(dir);
    execFileSync('chown', [owner, dir]);
    chmodSync(dir, 0o2750);
  }
}

export function controlFixture(
  t: Test,
  tasks: readonly FixtureTask[],
  options: { registryExtra?: string; schedule?: string; gates?: string } = {},
): ControlFixture {
  const name = `ctl${process.pid % 10000}x${++counter}`;
  const user = `agent-${name}`;
  const root = tempDir(t, 'agent-runner-control-');
  chmodSync(root, 0o755);
  const probeOut = path.join(root, 'probe');
  mkdirSync(probeOut, { mode: 0o777 });
  chmodSync(probeOut, 0o777);
  const agent = path.join(root, 'probe-agent.sh');
  writeFileSync(agent, probeAgent(probeOut), { mode: 0o755 });
  const fixture = drainFixture(t, tasks, {
    agent: ['/bin/sh', agent],
    config: { maxParallel: 4 },
    ...(options.gates ? { gates: options.gates } : {}),
  });
  createUser(t, user, path.join(root, 'home'), name);
  createRepoIdentities(t, user, path.join(root, 'home'), name);
  // The clone and its origin belong to the repo user, as provisioning leaves them.
  // Both live in one temp folder (origin.git and clone), which the user must be able to enter.
  const repos = path.dirname(fixture.origin);
  if (repos === tmpdir() || path.dirname(repos) !== tmpdir()) throw new Error(`unexpected fixture layout: ${repos}`);
  execFileSync('chown', ['-R', `${user}:${user}`, repos]);
  execFileSync('chmod', ['755', repos]);
  const state = path.join(root, 'state');
  const registry = path.join(root, 'registry.toml');
  writeFileSync(
    registry,
    `[repos.${name}]\npath = "${fixture.clone}"\nuser = "${user}"\nproxy_port = ${700 + (counter % 300)}\nschedule = "${options.schedule ?? '* * * * *'}"\nenv = { PROBE_MARKER = "from-registry" }\n${options.registryExtra ?? ''}`,
  );
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/root',
    AGENT_RUNNER_STATE: state,
    AGENT_RUNNER_CONFIG: registry,
    LANG: 'C.UTF-8',
    ROOT_SECRET_MARKER: 'must-not-leak',
  };
  return { name, user, clone: fixture.clone, origin: fixture.origin, state, registry, probeOut, env };
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts bin/BIN with the fixture's environment; `prefix` runs it through another program (`ip netns exec NS`). */
export function startBin(
  fixture: Pick<ControlFixture, 'env'>,
  bin: string,
  args: readonly string[],
  prefix: readonly string[] = [],
): { child: ChildProcess; done: Promise<Finished> } {
  const argv = [...prefix, process.execPath, path.join(BIN, bin), ...args];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: fixture.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

export function runBin(fixture: ControlFixture, bin: string, args: readonly string[]): Promise<Finished> {
  return startBin(fixture, bin, args).done;
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** git as root in a repo the test user owns (read-only use). */
export function rootGit(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'safe.directory=*', '-C', dir, ...args], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/** Task ids landed on a ref, from the merge commits' trailers. */
export function landed(dir: string, ref: string, base = 'main'): string[] {
  return rootGit(
    dir,
    'log',
    '--merges',
    '--reverse',
    '--format=%(trailers:key=Agent-Runner-Task,valueonly)',
    `${base}..${ref}`,
  )
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
