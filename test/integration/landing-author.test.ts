// The runner's own commits (landing merges, park and block notes) are
// authored by the registry's author_name/author_email (dispatch passes them
// to orchestrate), else by the checkout's configured user; agent-runner is
// always the committer.
import t from 'tap';
import { drainFixture, runOrchestrate } from '../helpers/drain-fixture.js';
import { git } from '../helpers/temp.js';
import { orchestrateCommand } from '../../src/control/dispatch/dispatch.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';
import type { RegistryRepo } from '../../src/types.js';

const TASKS = [
  { id: 'TASK-1', title: 'Lands', description: 'agent: write one.txt "1"' },
  { id: 'TASK-2', title: 'Blocks', description: 'agent: block "needs a human"' },
];

function authors(clone: string): string[] {
  return git(clone, 'log', '--format=%an <%ae> by %cn|%s', 'main..auto/work')
    .split('\n')
    .filter((line) => /\|(Land|Block) /.test(line))
    .sort();
}

t.test('the registry author signs landings and block notes', async (t) => {
  const fixture = drainFixture(t, TASKS);
  const run = await runOrchestrate(fixture, ['--author-name', 'Release Bot', '--author-email', 'bot@example.com']);
  t.equal(run.code, 0, run.stderr);
  t.same(authors(fixture.clone), [
    'Release Bot <bot@example.com> by agent-runner|Block TASK-2: needs a human',
    'Release Bot <bot@example.com> by agent-runner|Land TASK-1: Lands',
  ]);
});

t.test("without the flags, the checkout's configured user is the author", async (t) => {
  const fixture = drainFixture(t, TASKS);
  const run = await runOrchestrate(fixture);
  t.equal(run.code, 0, run.stderr);
  t.same(
    authors(fixture.clone).map((line) => line.split('|')[0]),
    [
      'Scripted Agent <agent@example.invalid> by agent-runner',
      'Scripted Agent <agent@example.invalid> by agent-runner',
    ],
  );
});

t.test('dispatch passes the registry author to orchestrate; a half-given author is refused', async (t) => {
  const repo: RegistryRepo = {
    name: 'web',
    path: '/srv/web',
    user: 'agent-web',
    baseBranch: 'main',
    proxyPort: 700,
    schedule: '* * * * *',
    maxParallel: 3,
    allow: [],
    loopbackPorts: [],
    toolchainPath: '/usr/bin:/bin',
    env: {},
    enabled: true,
    url: undefined,
    authorName: 'Release Bot',
    authorEmail: 'bot@example.com',
    limits: RUN_LIMIT_DEFAULTS,
    remotePollSec: 15,
  };
  const command = orchestrateCommand(
    {
      repo,
      state: '/s',
      install: { node: '/usr/bin/node', main: '/opt/main.js' },
      orchestrateArgs: ['--drain'],
      trigger: 'manual',
      progress: 'json',
      runId: 'R1',
    },
    { name: 'agent-web', uid: 1001, gid: 1001, home: '/home/agent-web', shell: '/bin/sh' },
  );
  t.match(command.args.join(' '), '--author-name Release Bot --author-email bot@example.com');
  const fixture = drainFixture(t, TASKS);
  const half = await runOrchestrate(fixture, ['--author-name', 'Release Bot']);
  t.equal(half.code, 2);
  t.match(half.stderr, '--author-email must be an email address');
});
