// Keystrokes into root's terminal (TIOCSTI): root runs provision and a
// --prompt job through the watcher from under a real pseudo-terminal (script),
// in a repo whose git config and hooks are hostile. Runner-made commits run
// no hook and no fsmonitor; what root's launcher starts as the agent and the
// gate identities (the agent, the gate) has no terminal: opening /dev/tty fails with ENXIO and no typed
// command reaches the shell that reads root's terminal afterwards. A control
// shows the same planted program, sharing the terminal, does get through.
import t, { type Test } from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { cli } from '../helpers/in-process-cli.js';
import { systemTestMayRun } from '../helpers/system.js';
import { provisionFixture } from '../helpers/provision-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { BIN, controlFixture, landed, probeAgent } from '../helpers/control-fixture.js';
import { identityNames } from '../../src/identities.js';
import { hostileKit, hostilePrograms, rootMarkers, typedMarkers, type Programs } from '../helpers/hostile-repo.js';
import { useBrokerAccount } from '../helpers/broker-account.js';

const TOOLS = ['ip', 'nft', 'squid', 'setpriv', 'useradd', 'git', 'script', 'perl'];

/**
 * Runs the lines with bash inside a new pseudo-terminal (root gets a
 * controlling tty, as in an operator's shell), then reads one line from that
 * terminal and runs it: whatever a planted program typed is executed there.
 */
function underPty(
  t: Test,
  env: Record<string, string>,
  lines: readonly string[],
): Promise<{ code: number | null; output: string }> {
  const dir = tempDir(t, 'agent-runner-pty-');
  const driver = path.join(dir, 'driver.sh');
  writeFileSync(driver, [...lines, 'read -t 3 -r line && eval "$line"', 'exit 0', ''].join('\n'), { mode: 0o700 });
  return new Promise((resolve, reject) => {
    // stdin stays an open pipe until the end: script must not see EOF and hang up the terminal early.
    const child = spawn('script', ['-qec', `/bin/bash ${driver}`, '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the pty run did not end within 180 s:\n${output.slice(-2000)}`));
    }, 180_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin!.destroy();
      resolve({ code, output });
    });
  });
}

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

function noRunnerProgramRan(t: Test, kit: Programs, user: number): void {
  t.same(
    rootMarkers(kit).map((marker) => marker.label),
    [],
    'no planted program ran as root',
  );
  const repoPrograms = kit.markers().filter((marker) => /^(hook-|fsmonitor)/.test(marker.label));
  t.same(
    repoPrograms.map((marker) => `${marker.label}.${marker.uid}`),
    [],
    'no hook and no fsmonitor ran for a runner-made commit',
  );
  t.same(
    typedMarkers(kit).map((marker) => marker.label),
    [],
    'nothing reached a terminal',
  );
  t.equal(existsSync(kit.injectedFile), false, "no injected command ran in root's terminal");
  void user;
}

if (systemTestMayRun(t, TOOLS)) {
  // provision host makes the broker's account: it is shared with the other system tests that need it.
  useBrokerAccount(t);
  t.test("control: a program sharing root's terminal does type into it", async (t) => {
    const programs = hostilePrograms(t);
    const result = await underPty(t, { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/root' }, [
      programs.program('control'),
    ]);
    t.equal(result.code, 0, result.output);
    t.equal(existsSync(programs.injectedFile), true, 'the typed command ran: the harness sees an injection');
  });

  t.test('provision repo under a terminal: the Blocked-status commit runs no repo program', async (t) => {
    const {
      env,
      user,
      home,
      clone,
      provisionArgs: args,
    } = await provisionFixture(
      t,
      {
        'README.md': '# demo\n',
        'backlog/config.yml': 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
      },
      'pty',
    );
    t.equal((await cli(env, ['provision', 'host'])).code, 0);
    const first = await cli(env, args);
    t.equal(first.code, 0, first.err);
    const kit = hostileKit(t, { user, home, clone });
    // The board loses Blocked again (as the user, hooks off), then the repo turns hostile.
    const config = path.join(clone, 'backlog', 'config.yml');
    writeFileSync(config, 'project_name: "demo"\nstatuses: ["To Do", "In Progress", "Done"]\n');
    spawnSync('chown', [`${user}:${user}`, config]);
    const commit = kit.asUser([
      'git',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.fsmonitor=false',
      '-c',
      'user.name=u',
      '-c',
      'user.email=u@x',
      '-C',
      clone,
      'commit',
      '-q',
      '-am',
      'drop Blocked',
    ]);
    t.equal(commit.status, 0, commit.stderr);
    kit.hostileGitConfig({ filters: true });

    const result = await underPty(t, env, [
      `node ${shellQuote(path.join(BIN, 'agent-runner'))} ${args.map(shellQuote).join(' ')}`,
    ]);
    t.equal(result.code, 0, result.output);
    t.match(result.output, /done: commit the board change in the clone/, 'provision made its commit');
    t.match(readFileSync(config, 'utf8'), /"Blocked"/);
    const log = kit.asUser([
      'git',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.fsmonitor=false',
      '-C',
      clone,
      'log',
      '-1',
      '--format=%s',
    ]);
    t.equal(log.stdout.trim(), 'Board: add the Blocked status', 'the Blocked status is committed');
    noRunnerProgramRan(t, kit, kit.uid);
  });

  t.test(
    'a --prompt job through the watcher under a terminal: no hook, and the agent and gate get no terminal',
    async (t) => {
      const programs = hostilePrograms(t);
      const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'Existing', status: 'Done' }], {
        gates: `#!/bin/sh\n${programs.program('gate')}\necho gate ok\n`,
      });
      // The agent: the planted program first (it tries the terminal), then the usual probe work.
      const agent = path.join(path.dirname(fixture.probeOut), 'probe-agent.sh');
      // It commits with its own hooks off, so any hook marker left is the runner's.
      const agentText = probeAgent(fixture.probeOut)
        .replace('set -e\n', `set -e\n${programs.program('agent')}\n`)
        .replace(/\bgit (add|-c)/g, 'git -c core.hooksPath=/dev/null -c core.fsmonitor=false $1');
      writeFileSync(agent, agentText, { mode: 0o755 });
      const kit = hostileKit(
        t,
        { user: fixture.user, home: path.join(path.dirname(fixture.probeOut), 'home'), clone: fixture.clone },
        programs,
      );
      kit.hostileGitConfig();
      const bin = (name: string) => shellQuote(path.join(BIN, name));
      const result = await underPty(t, fixture.env, [
        `node ${bin('enqueue')} ${fixture.name} --prompt 'Add a changelog entry'`,
        `node ${bin('watch')} --no-isolation ${fixture.name} --once`,
      ]);
      t.equal(result.code, 0, result.output.slice(-2000));
      t.same(landed(fixture.origin, 'auto/work'), ['TASK-2'], 'the prompt job created its task and it landed');
      noRunnerProgramRan(t, kit, kit.uid);
      // Root's launcher starts them, each as its own identity of the repo, not as the runner.
      const names = identityNames(fixture.user);
      for (const label of ['agent', 'gate'] as const) {
        const uid = Number(execFileSync('id', ['-u', names[label]], { encoding: 'utf8' }).trim());
        t.not(uid, kit.uid);
        const tried = kit.markers().find((marker) => marker.label === `${label}-tty` && marker.uid === uid);
        t.ok(tried, `the ${label} ran as the repo's ${label} identity (${names[label]})`);
        t.match(
          tried?.text ?? '',
          /open \/dev\/tty: No such device or address/,
          `the ${label} could not open a terminal (ENXIO)`,
        );
      }
    },
  );
}
