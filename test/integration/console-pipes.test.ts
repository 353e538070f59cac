// The console as a shell user meets it, with real processes: a reader that
// goes away (`| head -1`, `| true`) ends a command quietly with its own exit
// code; discard and gc refuse to act with no terminal to ask on and no --yes;
// --dry-run prints the plan and changes nothing; a task that does not exist
// is exit 1 "no such task"; `help exit-codes` and the examples under --help.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENT_RUNNER, drainFixture, runCli, runOrchestrate, type DrainFixture } from '../helpers/drain-fixture.js';
import { git, tempDir } from '../helpers/temp.js';

/** `agent-runner ARGS | READER` under bash: agent-runner's own exit status, its stderr, and what the reader printed. */
function piped(
  env: Record<string, string>,
  args: readonly string[],
  reader: string,
): Promise<{ status: number; stderr: string; stdout: string }> {
  const script = `"$@" 2>"$ERRFILE" | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`;
  const dir = tempDir(t, 'agent-runner-pipe-');
  const errFile = path.join(dir, 'stderr');
  const child = spawn('bash', ['-c', script, 'bash', process.execPath, AGENT_RUNNER, ...args], {
    env: { ...env, ERRFILE: errFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let shell = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (shell += chunk));
  return new Promise((resolve) =>
    child.on('close', () => {
      const status = Number(/status=(\d+)/.exec(shell)?.[1] ?? -1);
      resolve({ status, stdout, stderr: readFileSync(errFile, 'utf8') });
    }),
  );
}

let drained: DrainFixture | undefined;
/** One drained fixture: TASK-1 landed on auto/work, its branch kept for nothing; shared by the read-only tests. */
async function fixture(): Promise<DrainFixture> {
  if (drained) return drained;
  const made = drainFixture(t, [{ id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' }]);
  const run = await runOrchestrate(made);
  if (run.code !== 0) throw new Error(`the fixture's drain failed: ${run.stderr}`);
  drained = made;
  return made;
}

t.test('status | head -1 and status | true: the first line or nothing, exit 0, no stack', async (t) => {
  const f = await fixture();
  const head = await piped(f.env, ['status', '--workspace', f.clone, '--no-fetch'], 'head -1');
  t.equal(head.status, 0, head.stderr);
  t.match(head.stdout, /^base {5}main \(remotes\/origin\/main\) [0-9a-f]{12}\n$/, 'the first line only');
  t.equal(head.stderr, '', 'nothing on stderr');
  // `true` reads nothing and is gone before node has started: the write meets a closed pipe (EPIPE) for sure.
  const gone = await piped(f.env, ['status', '--workspace', f.clone, '--no-fetch', '--json'], 'true');
  t.equal(gone.status, 0, gone.stderr);
  t.equal(gone.stderr, '', 'no stack trace, no message');
});

t.test('fleet --json | head -c 10 and | true: exit 0, quietly', async (t) => {
  const dir = tempDir(t);
  const state = path.join(dir, 'state');
  mkdirSync(state);
  const config = path.join(dir, 'registry.toml');
  // Enough repos that the JSON is larger than a pipe's buffer: the writer meets the closed pipe mid-output. Their
  // checkouts are missing, which fleet reports per repo (exit 0: that is what it is for).
  writeFileSync(
    config,
    Array.from(
      { length: 120 },
      (_, i) => `[repos.r${i}]\npath = "${path.join(dir, `r${i}`)}"\nproxy_port = ${700 + i}\n`,
    ).join('\n'),
  );
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', AGENT_RUNNER_CONFIG: config, AGENT_RUNNER_STATE: state };
  const head = await piped(env, ['fleet', '--json'], 'head -c 10');
  t.equal(head.stdout.length, 10, 'ten bytes');
  t.equal(head.status, 0, head.stderr);
  t.equal(head.stderr, '');
  const gone = await piped(env, ['fleet', '--json'], 'true');
  t.equal(gone.status, 0, gone.stderr);
  t.equal(gone.stderr, '');
});

t.test('logs -f | true stops following when the reader is gone', async (t) => {
  const f = await fixture();
  const started = Date.now();
  const gone = await piped(f.env, ['logs', '--workspace', f.clone, 'TASK-1', '-f'], 'true');
  t.equal(gone.status, 0, gone.stderr);
  t.notMatch(gone.stderr, /EPIPE|at .*\.js:\d+/, 'no stack');
  t.ok(Date.now() - started < 20_000, 'it ended on its own');
});

t.test('discard and gc refuse with no terminal and no --yes; --dry-run changes nothing', async (t) => {
  const f = await fixture();
  const before = git(f.clone, 'rev-parse', 'auto/work');
  const branches = git(f.clone, 'branch', '--list');
  for (const command of ['discard', 'gc']) {
    const refused = await runCli(f, [command, '--workspace', f.clone]);
    t.equal(refused.code, 2, `${command}: exit 2`);
    t.equal(
      refused.stderr,
      `agent-runner: ${command} asks before it removes anything, and stdin is not a terminal; pass --yes to ${command} without asking, or --dry-run to print what it would remove\n`,
    );
    const both = await runCli(f, [command, '--workspace', f.clone, '--yes', '--dry-run']);
    t.equal(both.code, 2);
    t.match(both.stderr, `${command}: --yes and --dry-run exclude each other`);
  }
  const plan = await runCli(f, ['discard', '--workspace', f.clone, '--dry-run', '--json']);
  t.equal(plan.code, 0, plan.stderr);
  const parsed = JSON.parse(plan.stdout) as { staging: string; ahead: number; landed: { taskId: string }[] };
  t.equal(parsed.staging, before, 'the plan names the staging commit');
  t.same(
    parsed.landed.map((landing) => landing.taskId),
    ['TASK-1'],
    'and the task that would be dropped',
  );
  const human = await runCli(f, ['discard', '--workspace', f.clone, '--dry-run']);
  t.match(human.stdout, /auto\/work is reset to main; its \d+ commit\(s\) ahead are dropped/);
  t.match(human.stdout, /TASK-1 +[0-9a-f]{10} /);
  t.match(human.stdout, /\(dry run: nothing changed\)\n$/);
  const gcPlan = await runCli(f, ['gc', '--workspace', f.clone, '--dry-run', '--json']);
  t.equal(gcPlan.code, 0, gcPlan.stderr);
  t.match(JSON.parse(gcPlan.stdout), { workspace: f.clone, retentionDays: 30, expired: { transcripts: 0 } });
  t.equal(git(f.clone, 'rev-parse', 'auto/work'), before, 'auto/work did not move');
  t.equal(git(f.clone, 'branch', '--list'), branches, 'no branch went');
});

t.test('logs of a task that does not exist: exit 1, no such task', async (t) => {
  const f = await fixture();
  const missing = await runCli(f, ['logs', '--workspace', f.clone, 'TASK-99']);
  t.equal(missing.code, 1);
  t.match(
    missing.stderr,
    `agent-runner: no such task TASK-99 in ${f.clone}: the board (auto/work + origin/main) has no task with that id`,
  );
  const since = await runCli(f, ['logs', '--workspace', f.clone, 'TASK-1', '--since', '1h', '--json']);
  t.equal(since.code, 0, since.stderr);
  t.ok(since.stdout.split('\n').filter(Boolean).length > 1, 'the drain just now is within the hour');
  const none = await runCli(f, ['runs', '--workspace', f.clone, '--since', '2000-01-01', '--json']);
  t.equal(none.code, 0, none.stderr);
  t.equal((JSON.parse(none.stdout) as { runs: unknown[] }).runs.length, 1, 'the one drain');
  const bad = await runCli(f, ['runs', '--workspace', f.clone, '--since', 'last week']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, '--since "last week" is not a time; give a duration (90m, 2h, 3d)');
});

t.test('help exit-codes prints the table; --help shows examples', async (t) => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const run = (args: string[]) =>
    spawnSync(process.execPath, [AGENT_RUNNER, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const table = run(['help', 'exit-codes']);
  t.equal(table.status, 0);
  for (const code of ['0', '1', '2', '75']) t.match(table.stdout, new RegExp(`^ +${code} {2}\\w`, 'm'));
  for (const command of ['status', 'discard', 'gc', 'logs', 'runs', 'ledger', 'next', 'dispatch', 'pause']) {
    const help = run([command, '--help']);
    t.equal(help.status, 0, command);
    t.match(help.stdout, /\nExamples:\n {2}agent-runner /, `${command} --help has examples`);
  }
});
