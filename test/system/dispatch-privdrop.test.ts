// dispatch as root: the drain (orchestrate) runs as the repo's runner and the
// agent as the repo's agent identity, each with only its own groups, its own
// HOME and USER and none of root's environment; the run is recorded.
import t from 'tap';
import { readFileSync, readdirSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { BIN, controlFixture, landed, runBin, startBin } from '../helpers/control-fixture.js';
import { waitFor } from '../helpers/drain-fixture.js';
import { identityNames } from '../../src/identities.js';

/** uid, gid and groups of a user as `id` prints them for it, and its home. */
function account(user: string) {
  const id = (flag: string) => execFileSync('id', [flag, user], { encoding: 'utf8' }).trim();
  const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5]!;
  return { name: user, uid: id('-u'), gid: id('-g'), groups: id('-G'), home };
}

/** NUL- or newline-separated NAME=value lines as a record. */
function parseEnv(text: string, separator: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(separator)
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

t.test('dispatch drops to the repo user with a clean environment', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const runner = account(fixture.user);
  const agent = account(identityNames(fixture.user).agent);
  // The agent holds, so the drain can be seen while it runs.
  writeFileSync(path.join(fixture.probeOut, 'hold'), '');
  const dispatch = startBin(fixture, 'dispatch', ['--no-isolation', fixture.name, '--json']);
  t.teardown(() => {
    if (dispatch.child.exitCode === null) dispatch.child.kill('SIGKILL');
  });
  await waitFor(
    () => existsSync(path.join(fixture.probeOut, 'id-TASK-1')) || dispatch.child.exitCode !== null,
    60_000,
    'the agent to start',
  );
  const runsDir = path.join(fixture.state, 'repos', fixture.name, 'runs');
  const [runFile] = readdirSync(runsDir);
  const running = JSON.parse(readFileSync(path.join(runsDir, runFile!), 'utf8')) as { process: { pid: number } };
  // The recorded pid is orchestrate itself: the wrappers (prlimit, setpriv, env) exec in place.
  const drain = running.process.pid;
  t.ok(readFileSync(`/proc/${drain}/cmdline`, 'utf8').split('\0').includes('orchestrate'), 'the drain is orchestrate');
  const status = readFileSync(`/proc/${drain}/status`, 'utf8');
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim().split(/\s+/);
  t.same(field('Uid'), [runner.uid, runner.uid, runner.uid, runner.uid], 'the drain runs as the runner');
  t.same(field('Gid'), [runner.gid, runner.gid, runner.gid, runner.gid]);
  t.same(field('Groups'), [runner.gid], "and only the runner's own group");
  t.same(field('NoNewPrivs'), ['1'], 'with no_new_privs');
  const drainEnv = parseEnv(readFileSync(`/proc/${drain}/environ`, 'utf8'), '\0');
  t.equal(drainEnv.ROOT_SECRET_MARKER, undefined, "nothing of root's environment reaches the drain");
  t.equal(drainEnv.AGENT_RUNNER_CONFIG, undefined);
  t.equal(drainEnv.USER, runner.name);
  t.equal(drainEnv.HOME, runner.home);
  rmSync(path.join(fixture.probeOut, 'hold'));
  const result = await dispatch.done;
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

  const idLine = readFileSync(path.join(fixture.probeOut, 'id-TASK-1'), 'utf8').trim();
  t.equal(
    idLine,
    `uid=${agent.uid}(${agent.name}) gid=${agent.gid}(${agent.name}) groups=${agent.gid}(${agent.name})`,
    "uid, gid and only the agent identity's own groups",
  );
  t.equal(agent.groups, agent.gid, "the agent is in no group of the runner's");
  t.equal(runner.groups, runner.gid);
  const env = parseEnv(readFileSync(path.join(fixture.probeOut, 'env-TASK-1'), 'utf8'), '\n');
  t.equal(env.ROOT_SECRET_MARKER, undefined, "nothing of root's environment survives");
  t.equal(env.AGENT_RUNNER_CONFIG, undefined);
  t.equal(env.USER, agent.name);
  t.equal(env.LOGNAME, agent.name);
  t.equal(env.HOME, agent.home, "the agent's own home, not the runner's");
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
  for (const user of [runner.name, agent.name]) {
    const asUser = spawnSync(
      'setpriv',
      ['--reuid', user, '--regid', user, '--init-groups', 'sh', '-c', `echo forged >> '${path.join(ledgerDir, day!)}'`],
      { encoding: 'utf8' },
    );
    t.not(asUser.status, 0, `${user} cannot append to the ledger (${asUser.stderr.trim()})`);
  }
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
