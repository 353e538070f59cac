// `agent-runner run` on a board made by the real backlog CLI: a command agent
// completes the task (Done, committed, transcript written); bad input is one
// line and exit 2 with nothing written; the claude adapter runs end to end
// against the scripted agent posing as claude; stall detection ends the loop.
import t, { type Test } from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { git, gitRepo, tempDir } from '../helpers/temp.js';
import { AGENT_RUNNER, PROJECT_ROOT, SCRIPTED_AGENT } from '../helpers/drain-fixture.js';

const BACKLOG = path.join(PROJECT_ROOT, 'node_modules/.bin/backlog');

function cliBoard(t: Test, config: Record<string, unknown>) {
  const repo = gitRepo(t);
  const home = tempDir(t, 'agent-runner-home-');
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.invalid\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home };
  const backlog = (...args: string[]) =>
    execFileSync(BACKLOG, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  backlog('init', 'Run test', '--defaults', '--integration-mode', 'none');
  backlog(
    'task',
    'create',
    'Write the greeting',
    '-d',
    'agent: write greeting.txt "hello"',
    '--ac',
    'greeting.txt exists',
    '--priority',
    'high',
    '--plain',
  );
  backlog('task', 'create', 'Depends on the greeting', '-d', 'agent: write two.txt "2"', '--dep', 'task-1', '--plain');
  mkdirSync(path.join(repo, '.agent'), { recursive: true });
  writeFileSync(path.join(repo, '.agent/config.json'), JSON.stringify(config));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'board');
  const state = tempDir(t, 'agent-runner-state-');
  return { repo, home, state, env: { ...env, AGENT_RUNNER_STATE: state } };
}

function run(env: Record<string, string>, args: string[]) {
  return spawnSync(process.execPath, [AGENT_RUNNER, 'run', ...args], { env, encoding: 'utf8' });
}

t.test('a command agent completes a task on a board the backlog CLI made', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command', command: [SCRIPTED_AGENT] });
  const before = git(fixture.repo, 'rev-parse', 'HEAD');
  const result = run(fixture.env, [
    '--workspace',
    fixture.repo,
    '--task',
    'TASK-1',
    '--assistant',
    'command',
    '--json',
  ]);
  t.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { outcome: { kind: string }; transcript: string; sessions: unknown[] };
  t.same(report.outcome, { kind: 'done' });
  t.equal(report.sessions.length, 1);
  t.equal(git(fixture.repo, 'rev-list', '--count', `${before}..HEAD`), '1', 'one commit: code and task together');
  t.equal(readFileSync(path.join(fixture.repo, 'greeting.txt'), 'utf8'), 'hello\n');
  const view = JSON.parse(
    execFileSync(BACKLOG, ['task', 'view', 'TASK-1', '--json'], {
      cwd: fixture.repo,
      env: fixture.env,
      encoding: 'utf8',
    }),
  ) as Record<string, unknown>;
  t.match(JSON.stringify(view), /"status":"Done"/, 'the backlog CLI sees the task Done');
  const transcript = readFileSync(report.transcript, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.same(
    transcript.map((line) => line.event).filter((event) => event !== 'output'),
    ['run-start', 'session-start', 'session-end', 'run-end'],
  );
  t.equal(transcript[0]!.assistant, 'command');
  t.ok(report.transcript.startsWith(fixture.state), 'the transcript is under AGENT_RUNNER_STATE');
});

t.test('without --task the first ready task runs; model and effort are stamped into the transcript', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command', command: [SCRIPTED_AGENT], model: 'from-config' });
  const result = run(fixture.env, ['--workspace', fixture.repo, '--effort', 'high', '--json']);
  t.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { taskId: string; transcript: string };
  t.equal(report.taskId, 'TASK-1');
  const start = JSON.parse(readFileSync(report.transcript, 'utf8').split('\n')[0]!) as Record<string, unknown>;
  t.same(
    [start.model, start.modelSource, start.effort, start.effortSource],
    ['from-config', 'flag-or-config', 'high', 'flag-or-config'],
  );
});

t.test('the claude adapter end to end, against the scripted agent posing as claude', async (t) => {
  const fixture = cliBoard(t, { assistant: 'claude' });
  const bin = tempDir(t, 'agent-runner-bin-');
  symlinkSync(SCRIPTED_AGENT, path.join(bin, 'claude'));
  const env = { ...fixture.env, PATH: `${bin}:${fixture.env.PATH}` };
  const result = run(env, ['--workspace', fixture.repo, '--task', 'TASK-1', '--model', 'sonnet', '--json']);
  t.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as {
    outcome: { kind: string };
    sessions: { result: { ok: boolean; sessionId?: string; costUsd?: number } }[];
  };
  t.same(report.outcome, { kind: 'done' });
  t.equal(report.sessions[0]!.result.ok, true);
  t.type(report.sessions[0]!.result.sessionId, 'string');
  t.type(report.sessions[0]!.result.costUsd, 'number');
});

t.test('an agent that changes nothing is stalled, and --iterations stops there', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command', command: ['/bin/true'] });
  const result = run(fixture.env, ['--workspace', fixture.repo, '--task', 'TASK-1', '--iterations', '3', '--json']);
  t.equal(result.status, 1);
  const report = JSON.parse(result.stdout) as { outcome: { kind: string; reason: string }; sessions: unknown[] };
  t.equal(report.outcome.kind, 'stalled');
  t.equal(report.sessions.length, 1, 'the loop ends at the first session that changed nothing');
});

t.test('bad input: one line naming what and how to fix it, exit 2, nothing written', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command', command: [SCRIPTED_AGENT] });
  const notRepo = tempDir(t);
  const cases: [string, string[], RegExp][] = [
    ['missing workspace', ['--workspace', path.join(notRepo, 'nope')], /does not exist/],
    ['not a git repo', ['--workspace', notRepo], /not a git repository/],
    [
      'no backlog',
      ['--workspace', gitRepo(t)],
      /has no Backlog.md board \(no backlog\/ or \.backlog\/ directory, and no backlog\.config\.yml naming one\); run `backlog init`/,
    ],
    ['unknown task', ['--workspace', fixture.repo, '--task', 'TASK-99'], /no task TASK-99/],
    [
      'unknown assistant',
      ['--workspace', fixture.repo, '--assistant', 'gpt'],
      /unknown assistant "gpt"; use one of claude, codex, command/,
    ],
  ];
  const head = git(fixture.repo, 'rev-parse', 'HEAD');
  for (const [name, args, message] of cases) {
    const result = run(fixture.env, args);
    t.equal(result.status, 2, `${name}: exit 2`);
    t.match(result.stderr, message, `${name}: says what`);
    t.equal(result.stderr.trim().split('\n').length, 1, `${name}: one line`);
  }
  writeFileSync(
    path.join(fixture.repo, '.agent/config.json'),
    JSON.stringify({ assistant: 'robot', maxParallel: 99, bogus: true }),
  );
  const invalid = run(fixture.env, ['--workspace', fixture.repo]);
  t.equal(invalid.status, 2, 'invalid config: exit 2');
  t.match(invalid.stderr, /3 problem\(s\)/, 'every problem at once');
  t.match(invalid.stderr, /assistant: must be one of claude, codex, command; set "assistant"/);
  t.match(invalid.stderr, /maxParallel: must be a whole number from 1 to 16/);
  t.match(invalid.stderr, /bogus: is not a known key/);
  t.equal(git(fixture.repo, 'rev-parse', 'HEAD'), head, 'nothing committed');
  t.same(readdirSync(fixture.state), [], 'nothing written to the state dir');
  t.notOk(existsSync(path.join(fixture.repo, 'greeting.txt')));
});

t.test('secrets from the home and the environment never reach the transcript', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command' });
  const token = 'ghp_0123456789abcdefTOKEN';
  writeFileSync(path.join(fixture.home, '.git-credentials'), `https://bot:${token}@github.com\n`, { mode: 0o600 });
  // An agent that prints the credentials file and its environment.
  writeFileSync(
    path.join(fixture.repo, '.agent/config.json'),
    JSON.stringify({ assistant: 'command', command: ['/bin/sh', '-c', 'cat "$HOME/.git-credentials"; env'] }),
  );
  const env = { ...fixture.env, ANTHROPIC_API_KEY: 'sk-ant-api03-secretvalue' };
  const result = run(env, ['--workspace', fixture.repo, '--task', 'TASK-1', '--json']);
  const report = JSON.parse(result.stdout) as { transcript: string };
  const transcript = readFileSync(report.transcript, 'utf8');
  t.match(transcript, /https:\/\/bot:\[redacted\]@github\.com/, 'the agent did print the credentials line');
  t.notMatch(transcript, token, 'the git token is redacted');
  t.notMatch(transcript, 'sk-ant-api03-secretvalue', 'the API key from the environment is redacted');
  t.match(transcript, /GIT_COMMITTER_NAME=agent-runner/, 'agents commit with agent-runner as committer');
});

t.test('work an agent leaves uncommitted is committed by the runner, not lost', async (t) => {
  const fixture = cliBoard(t, {
    assistant: 'command',
    command: [
      '/bin/sh',
      '-c',
      'sed -i "s/^status: To Do$/status: Done/" backlog/tasks/task-1*.md && echo kept > left.txt',
    ],
  });
  const result = run(fixture.env, ['--workspace', fixture.repo, '--task', 'TASK-1', '--json']);
  t.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as {
    outcome: { kind: string };
    leftovers: boolean;
    leftoverCommit: string | null;
  };
  t.same([report.outcome.kind, report.leftovers], ['done', true]);
  t.equal(report.leftoverCommit, git(fixture.repo, 'rev-parse', 'HEAD'));
  t.equal(git(fixture.repo, 'log', '-1', '--format=%s'), 'TASK-1: commit what the agent left uncommitted');
  t.equal(git(fixture.repo, 'status', '--porcelain'), '', 'nothing is left behind');
  t.equal(git(fixture.repo, 'show', 'HEAD:left.txt'), 'kept');
});

t.test('run --task on a task that is not ready says why before it runs it', async (t) => {
  const fixture = cliBoard(t, { assistant: 'command', command: ['/bin/true'] });
  const file = readdirSync(path.join(fixture.repo, 'backlog/tasks')).find((name) => name.startsWith('task-1 '))!;
  const full = path.join(fixture.repo, 'backlog/tasks', file);
  writeFileSync(full, readFileSync(full, 'utf8').replace(/^labels: \[\]$/m, 'labels:\n  - risk:needs-human'));
  git(fixture.repo, 'commit', '-qam', 'needs a human');
  const result = run(fixture.env, ['--workspace', fixture.repo, '--task', 'TASK-1']);
  t.match(result.stderr, /warning: TASK-1 is not ready \(needs a human\); running it because --task names it/);
  t.match(
    result.stdout,
    /^TASK-1 stalled: the session changed nothing/m,
    'the kind is said once ("stalled: stalled:" before)',
  );
});
