// dispatch as root: the agent runs as the repo's user with only its own
// groups and none of root's environment; the run is recorded.
import t from 'tap';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { BIN, controlFixture, landed, runBin } from '../helpers/control-fixture.js';

t.test('dispatch drops to the repo user with a clean environment', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const result = await runBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
  t.equal(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as Record<string, unknown>;
  t.match(record, {
    repo: fixture.name,
    trigger: 'manual',
    user: fixture.user,
    status: 'finished',
    outcome: 'drained',
    exitCode: 0,
  });
  t.same(
    (record.tasks as { id: string; outcome: string }[]).map((task) => [task.id, task.outcome]),
    [['TASK-1', 'landed']],
  );
  const onDisk = JSON.parse(
    readFileSync(path.join(fixture.state, 'repos', fixture.name, 'runs', `${String(record.id)}.json`), 'utf8'),
  ) as unknown;
  t.same(onDisk, record, 'the run record on disk is what was printed');

  const uid = execFileSync('id', ['-u', fixture.user], { encoding: 'utf8' }).trim();
  const gid = execFileSync('id', ['-g', fixture.user], { encoding: 'utf8' }).trim();
  const groups = execFileSync('id', ['-G', fixture.user], { encoding: 'utf8' }).trim();
  const idLine = readFileSync(path.join(fixture.probeOut, 'id-TASK-1'), 'utf8').trim();
  t.equal(
    idLine,
    `uid=${uid}(${fixture.user}) gid=${gid}(${fixture.user}) groups=${gid}(${fixture.user})`,
    "uid, gid and only the user's own groups",
  );
  t.equal(groups, gid);
  const env = Object.fromEntries(
    readFileSync(path.join(fixture.probeOut, 'env-TASK-1'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  t.equal(env.ROOT_SECRET_MARKER, undefined, "nothing of root's environment survives");
  t.equal(env.AGENT_RUNNER_CONFIG, undefined);
  t.equal(env.USER, fixture.user);
  t.equal(env.HOME, execFileSync('getent', ['passwd', fixture.user], { encoding: 'utf8' }).split(':')[5]);
  t.match(env.http_proxy, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(env.AGENT_TASK_ID, 'TASK-1');
  t.equal(env.PROBE_MARKER, 'from-registry', "the registry's non-secret env reaches the agent");
  t.same(landed(fixture.origin, 'auto/work'), ['TASK-1'], 'the drain landed and published the task');
  t.notOk(existsSync(path.join(fixture.state, 'repos', fixture.name, 'run.lock')), 'the lock is released');
  t.same(readdirSync(path.join(fixture.state, 'repos', fixture.name, 'runs')).length, 1);

  // The ledger: sealed by root from orchestrate's summary, where the repo user cannot write.
  t.same(
    record.usage,
    { sessions: 1, costUsd: 0, unknownCost: 1, tokens: 0 },
    'a command agent reports no usage: one session of unknown cost',
  );
  const ledgerDir = path.join(fixture.state, 'repos', fixture.name, 'ledger');
  const stat = statSync(ledgerDir);
  t.same([stat.uid, stat.mode & 0o777], [0, 0o700], 'the ledger dir is root-only');
  const [day] = readdirSync(ledgerDir);
  t.match(day, /^\d{4}-\d{2}-\d{2}\.jsonl$/);
  t.equal(statSync(path.join(ledgerDir, day!)).uid, 0);
  const entries = readFileSync(path.join(ledgerDir, day!), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.match(entries, [
    {
      repo: fixture.name,
      run: record.id,
      task: 'TASK-1',
      assistant: 'command',
      costUsd: null,
      inputTokens: null,
      outcome: 'ok',
    },
  ]);
  const asUser = spawnSync(
    'setpriv',
    [
      '--reuid',
      fixture.user,
      '--regid',
      fixture.user,
      '--init-groups',
      'sh',
      '-c',
      `echo forged >> '${path.join(ledgerDir, day!)}'`,
    ],
    { encoding: 'utf8' },
  );
  t.not(asUser.status, 0, `the repo user cannot append to the ledger (${asUser.stderr.trim()})`);
  const ledger = await runBin(fixture, 'agent-runner', ['ledger', fixture.name, '--json']);
  t.equal(ledger.code, 0, ledger.stderr);
  t.match(JSON.parse(ledger.stdout), { repos: [fixture.name], by: 'task', total: { sessions: 1, unknownCost: 1 } });
});

t.test('dispatch refuses without root and names an unknown repo', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, []);
  const unknown = await runBin(fixture, 'dispatch', ['nope']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, `${fixture.registry}: repos.nope: no such repo; registered repos: ${fixture.name}`);
  const asUser = spawnSync(
    'setpriv',
    [
      '--reuid',
      fixture.user,
      '--regid',
      fixture.user,
      '--init-groups',
      '--',
      process.execPath,
      path.join(BIN, 'dispatch'),
      fixture.name,
    ],
    {
      env: fixture.env,
      encoding: 'utf8',
      cwd: '/',
    },
  );
  t.equal(asUser.status, 2);
  t.match(asUser.stderr, "agent-runner: dispatch must run as root: it drops to the repo's user");
});
