import t from 'tap';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../src/cli/commands.js';
import type { CliContext } from '../../src/cli/context.js';
import { realControlPorts } from '../../src/io/wire.js';
import { git, gitRepo, tempDir, writeFiles } from '../helpers/temp.js';
import { taskFileText } from '../helpers/board-builder.js';

const created = '2026-11-29 14:35';

async function next(cwd: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const context: CliContext = {
    env: {},
    cwd,
    ports: realControlPorts(),
    stdoutIsTTY: false,
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    terminate: new AbortController().signal,
    uid: 1000,
    selfBin: '/nonexistent/agent-runner',
  };
  const code = await runCli(['next', ...args], context);
  return { code, out, err };
}

function board(t: Parameters<typeof gitRepo>[0]): string {
  return gitRepo(t, {
    'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n',
    'backlog/tasks/task-1 - One.md': taskFileText({
      id: 'TASK-1',
      title: 'One',
      createdDate: created,
      status: 'In Progress',
    }),
    'backlog/tasks/task-2 - Two.md': taskFileText({
      id: 'TASK-2',
      title: 'Two',
      createdDate: created,
      dependencies: ['TASK-1'],
      labels: ['risk:needs-human'],
    }),
    'backlog/tasks/task-3 - Three.md': taskFileText({
      id: 'TASK-3',
      title: 'Three',
      createdDate: created,
      priority: 'high',
      labels: ['area:api'],
    }),
    'backlog/tasks/task-10 - Ten.md': taskFileText({ id: 'TASK-10', title: 'Ten', createdDate: created }),
    'backlog/tasks/task-broken.md': 'no frontmatter\n',
  });
}

t.test('human output: ready in order, then the rest with reasons', async (t) => {
  const repo = board(t);
  const result = await next(path.dirname(repo), '--workspace', path.basename(repo));
  t.same(result, {
    code: 0,
    err: '',
    out: [
      'Ready (2):',
      '  TASK-3   high  Three  [area:api]',
      '  TASK-10  -     Ten',
      '',
      'Not ready (3):',
      '  TASK-1  One                           status In Progress',
      '  TASK-2  Two                           blocked by TASK-1 (In Progress); needs a human',
      '  -       backlog/tasks/task-broken.md  unreadable: no frontmatter: the file must start with a --- line, then YAML, then a closing --- line',
      '',
    ].join('\n'),
  });
});

t.test('--json', async (t) => {
  const repo = board(t);
  const result = await next(repo, '--workspace', '.', '--json');
  t.equal(result.code, 0);
  t.same(JSON.parse(result.out), {
    source: 'checkout',
    ready: [
      { id: 'TASK-3', title: 'Three', priority: 'high', labels: ['area:api'] },
      { id: 'TASK-10', title: 'Ten', priority: null, labels: [] },
    ],
    notReady: [
      { id: 'TASK-1', file: 'backlog/tasks/task-1 - One.md', title: 'One', reasons: ['status In Progress'] },
      {
        id: 'TASK-2',
        file: 'backlog/tasks/task-2 - Two.md',
        title: 'Two',
        reasons: ['blocked by TASK-1 (In Progress)', 'needs a human'],
      },
      {
        id: null,
        file: 'backlog/tasks/task-broken.md',
        title: '',
        reasons: [
          'unreadable: no frontmatter: the file must start with a --- line, then YAML, then a closing --- line',
        ],
      },
    ],
  });
});

t.test('an empty board', async (t) => {
  const repo = gitRepo(t, { 'backlog/config.yml': 'statuses: ["To Do", "Done"]\n' });
  t.same(await next(repo, '--workspace', repo), { code: 0, out: 'No tasks on the board.\n', err: '' });
  t.same(await next(repo, '--workspace', repo, '--json'), {
    code: 0,
    out: '{\n  "source": "checkout",\n  "ready": [],\n  "notReady": []\n}\n',
    err: '',
  });
});

t.test('bad input: exit 2 with one line naming what and the fix', async (t) => {
  const dir = tempDir(t);
  mkdirSync(path.join(dir, 'plain'));
  const noBacklog = gitRepo(t);
  t.same(await next(dir, '--workspace', 'missing'), {
    code: 2,
    out: '',
    err: `agent-runner: workspace ${path.join(dir, 'missing')} does not exist; pass the path of a git checkout\n`,
  });
  t.same(await next(dir, '--workspace', 'plain'), {
    code: 2,
    out: '',
    err: `agent-runner: workspace ${path.join(dir, 'plain')} is not a git repository (no .git); run git init or clone it first\n`,
  });
  t.same(await next(dir, '--workspace', noBacklog), {
    code: 2,
    out: '',
    err: `agent-runner: workspace ${noBacklog} has no Backlog.md board (no backlog/ or .backlog/ directory, and no backlog.config.yml naming one); run \`backlog init\` there\n`,
  });
  // No --workspace: the current directory is the workspace.
  t.same(await next(dir), {
    code: 2,
    out: '',
    err: `agent-runner: workspace ${dir} is not a git repository (no .git); run git init or clone it first\n`,
  });
  t.equal(
    (await next(noBacklog)).err,
    `agent-runner: workspace ${noBacklog} has no Backlog.md board (no backlog/ or .backlog/ directory, and no backlog.config.yml naming one); run \`backlog init\` there\n`,
    'the current directory, checked like a --workspace',
  );
});

t.test(
  'after a drain, next reads auto/work (plus tasks filed on the base since), as the drain and fleet do',
  async (t) => {
    const repo = board(t);
    // A drain landed TASK-3 and TASK-10 on auto/work; the checkout still says To Do.
    git(repo, 'checkout', '-q', '-b', 'auto/work');
    writeFiles(repo, {
      'backlog/tasks/task-3 - Three.md': taskFileText({
        id: 'TASK-3',
        title: 'Three',
        createdDate: created,
        priority: 'high',
        labels: ['area:api'],
        status: 'Done',
      }),
      'backlog/tasks/task-10 - Ten.md': taskFileText({
        id: 'TASK-10',
        title: 'Ten',
        createdDate: created,
        status: 'Done',
      }),
    });
    git(repo, 'commit', '-q', '-am', 'land TASK-3 and TASK-10');
    git(repo, 'checkout', '-q', 'main');
    // Filed on main after that drain: the next drain merges it in.
    writeFiles(repo, {
      'backlog/tasks/task-11 - Eleven.md': taskFileText({ id: 'TASK-11', title: 'Eleven', createdDate: created }),
    });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'file TASK-11');
    const result = await next(repo, '--workspace', '.', '--json');
    t.equal(result.code, 0, result.err);
    const json = JSON.parse(result.out) as {
      source: string;
      ready: { id: string }[];
      notReady: { id: string; reasons: string[] }[];
    };
    t.equal(json.source, 'auto/work + main');
    t.same(
      json.ready.map((task) => task.id),
      ['TASK-11'],
      'TASK-3 and TASK-10 are Done on auto/work, not ready',
    );
    t.same(
      json.notReady.filter((entry) => entry.id === 'TASK-3' || entry.id === 'TASK-10').map((entry) => entry.reasons),
      [['Done'], ['Done']],
    );
    const human = await next(repo, '--workspace', '.');
    t.match(human.out, /^Board of auto\/work \+ main:\nReady \(1\):\n {2}TASK-11/);
  },
);
