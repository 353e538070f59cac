// `demo --keep` ends with the commands that look at what it kept; each one,
// run as printed (through sh, as an operator pastes it), must show the kept
// demo: the transcript, the run history, staging, the ledger, and the
// dashboard (in a real tmux).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { AGENT_RUNNER } from '../helpers/drain-fixture.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' };
const sh = (line: string) => spawnSync('sh', ['-c', line], { env, encoding: 'utf8' });

/** The printed commands: the lines under "to look at what it kept:", by what each shows. */
function printedCommands(stdout: string): Map<string, string> {
  const lines = stdout.slice(stdout.indexOf('to look at what it kept:\n')).split('\n').slice(1);
  const commands = new Map<string, string>();
  for (let i = 0; i + 1 < lines.length; i += 2)
    if (lines[i]!.startsWith('  ') && lines[i + 1]!.startsWith('    '))
      commands.set(lines[i]!.trim().replace(/:$/, ''), lines[i + 1]!.trim());
  return commands;
}

t.test('the commands demo --keep prints work as printed', async (t) => {
  const demo = spawnSync(process.execPath, [AGENT_RUNNER, 'demo', '--keep'], { env, encoding: 'utf8' });
  const root = /repos kept in (\S+)/.exec(demo.stdout)?.[1];
  if (root) t.teardown(() => rmSync(root, { recursive: true, force: true }));
  t.equal(demo.status, 0, demo.stderr.slice(-1000));
  t.ok(root, 'it says where the repos are');
  const commands = printedCommands(demo.stdout);
  t.same(
    [...commands.keys()],
    ["TASK-1's transcript", 'the run history', 'the staging branch', 'the ledger', 'the dashboard'],
    'one command per look',
  );
  const expectations: [string, RegExp][] = [
    ["TASK-1's transcript", /run started: claude[\s\S]*session 1 started/],
    ['the run history', /drained {2}by orchestrate[\s\S]*TASK-1 {2}landed/],
    ['the staging branch', /staging {2}auto\/work/],
    ['the ledger', /demo TASK-1 /],
  ];
  for (const [what, expected] of expectations) {
    const line = commands.get(what) ?? '';
    t.match(line, /AGENT_RUNNER_STATE=/, `${what}: names the state it needs`);
    const run = sh(line);
    t.equal(run.status, 0, `${what}: exit 0 (${run.stderr.trim()})`);
    t.match(run.stdout, expected, `${what}: shows the kept demo`);
    t.notMatch(run.stdout + run.stderr, /no agent has run|no runs recorded/, `${what}: finds the records`);
  }

  // fleet, runs and the dashboard say the same of the demo's drain (run by hand: no root record), cost included.
  const dashboardEnv = /^((?:\S+=\S+ )+)/.exec(commands.get('the dashboard') ?? '')?.[1] ?? '';
  const fleet = sh(`${dashboardEnv}${process.execPath} ${AGENT_RUNNER} fleet --json`);
  const runs = sh(`${dashboardEnv}${process.execPath} ${AGENT_RUNNER} runs --repo demo --json`);
  t.equal(fleet.status, 0, `fleet --json exit 0 (${fleet.stderr.trim()})`);
  t.equal(runs.status, 0, `runs --json exit 0 (${runs.stderr.trim()})`);
  const lastRun = (JSON.parse(fleet.stdout) as { repos: { lastRun: Record<string, unknown> | null }[] }).repos[0]
    ?.lastRun;
  const newest = (JSON.parse(runs.stdout) as { runs: Record<string, unknown>[] }).runs[0];
  t.ok(lastRun, 'fleet has a last run');
  t.ok(newest, 'runs lists the drain');
  const counts = newest?.counts as Record<string, number> | undefined;
  t.same(
    lastRun && {
      id: lastRun.id,
      trigger: lastRun.trigger,
      outcome: lastRun.outcome,
      cost: lastRun.cost,
      endedAt: lastRun.endedAt,
      landed: lastRun.landed,
      parked: lastRun.parked,
    },
    newest && {
      id: newest.id,
      trigger: newest.trigger,
      outcome: newest.outcome,
      cost: newest.cost,
      endedAt: newest.endedAt,
      landed: counts?.landed,
      parked: counts?.parked,
    },
    'fleet and runs agree on the last run',
  );
  t.equal(newest?.trigger, 'orchestrate', 'started by orchestrate');
  t.match(String(newest?.cost), /^\$\d/, 'priced from the ledger');
  const frame = sh(`${dashboardEnv}${process.execPath} ${AGENT_RUNNER} tui --once`);
  t.match(
    frame.stdout,
    new RegExp(`${String(newest?.outcome)} ${String(counts?.landed)} landed`),
    'the dashboard row shows the same run',
  );

  // The dashboard needs a terminal: a tmux server of its own, ended afterwards.
  const socket = `agent-runner-demo-keep-${process.pid}`;
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { env, encoding: 'utf8' });
  t.teardown(() => void tmux('kill-server'));
  const started = tmux('new-session', '-d', '-x', '200', '-y', '50', commands.get('the dashboard') ?? 'false');
  t.equal(started.status, 0, `tmux started (${started.stderr.trim()})`);
  let screen = '';
  for (let i = 0; i < 100 && !/demo\s+yes/.test(screen); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    screen = tmux('capture-pane', '-p').stdout ?? '';
  }
  t.match(screen, /demo\s+yes/, 'the dashboard lists the kept repo, enabled');
  t.notMatch(screen, /INVALID|registry problem/, 'from a registry with no problem');
});
