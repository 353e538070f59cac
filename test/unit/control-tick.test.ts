// Tick decisions and the other pure deciders of the control plane.
import t from 'tap';
import { decideTick, needsBoard, type TickInput } from '../../src/control/watch/tick.js';
import { describeHolder } from '../../src/lock.js';
import { finishRun, parseOrchestrateSummary, type RunRecord } from '../../src/control/runs/record.js';
import { combineBoards, parseBatch, parseBatchCheck, parseLsTree } from '../../src/control/repo-view/board.js';
import { nextTaskNumber, promptTaskText, taskFileName, titleOf } from '../../src/control/jobs/prompt-task.js';
import { orchestrateCommand } from '../../src/control/dispatch/dispatch.js';
import { RUN_LIMIT_DEFAULTS } from '../../src/control/registry/limits.js';
import { progressLine } from '../../src/cli/root-support.js';
import { parseTaskFile } from '../../src/board/parse.js';
import type { Board, RegistryRepo, Task } from '../../src/types.js';

const base: TickInput = { enabled: true, running: false, stopping: false, queued: 0, ready: [] };

t.test('tick decisions', async (t) => {
  const rows: [Partial<TickInput>, ReturnType<typeof decideTick>][] = [
    [{}, { kind: 'idle' }],
    [{ ready: ['TASK-1', 'TASK-2'] }, { kind: 'drain', ready: ['TASK-1', 'TASK-2'] }],
    [{ queued: 2, ready: ['TASK-1'] }, { kind: 'run-job' }],
    [{ queued: 1, boardError: 'x' }, { kind: 'run-job' }],
    [
      { ready: undefined, boardError: 'cannot read' },
      { kind: 'broken', reason: 'cannot read' },
    ],
    [
      { running: true, queued: 3 },
      { kind: 'skip', reason: 'running' },
    ],
    [
      { stopping: true, running: true, queued: 3 },
      { kind: 'skip', reason: 'stopping' },
    ],
    [
      { enabled: false, queued: 3, ready: ['TASK-1'] },
      { kind: 'skip', reason: 'disabled' },
    ],
  ];
  for (const [change, expected] of rows) t.same(decideTick({ ...base, ...change }), expected, JSON.stringify(change));
  t.equal(needsBoard({ enabled: true, running: false, stopping: false, queued: 0 }), true);
  t.equal(
    needsBoard({ enabled: true, running: false, stopping: false, queued: 1 }),
    false,
    'a queued job needs no board read',
  );
  t.equal(needsBoard({ enabled: false, running: false, stopping: false, queued: 0 }), false);
});

t.test('lock holders', async (t) => {
  const holder = { pid: 42, startTime: '1000', command: 'dispatch web', since: '2026-01-01T00:00:00.000Z' };
  t.equal(
    describeHolder(holder, Date.parse('2026-01-01T00:01:30.000Z')),
    'held by pid 42 (dispatch web) since 2026-01-01T00:00:00.000Z (90s ago)',
  );
  t.equal(describeHolder(undefined, 0), 'held by a process that has not recorded itself yet');
});

const started: RunRecord = {
  id: 'r1',
  repo: 'web',
  trigger: 'watch',
  user: 'agent-web',
  args: ['--drain'],
  status: 'running',
  startedAt: '2026-01-01T00:00:00.000Z',
};

t.test('run records from orchestrate output', async (t) => {
  const summary = {
    runId: 'r1',
    outcome: 'drained',
    tasks: [{ id: 'TASK-1', title: 'A', outcome: 'landed', durationMs: 5 }],
    staging: { base: 'b', head: 'h' },
    pushed: true,
  };
  t.same(parseOrchestrateSummary(`noise\n${JSON.stringify(summary)}\n`), summary);
  t.same(parseOrchestrateSummary(JSON.stringify(summary, null, 2)), summary, 'pretty-printed too');
  t.equal(parseOrchestrateSummary('{"event":"x"}\n'), undefined);
  const ended = {
    exitCode: 0,
    signal: null,
    stdout: JSON.stringify(summary),
    stderrTail: '',
    endedAt: 'E',
    interrupted: false,
  };
  t.same(finishRun(started, ended), {
    ...started,
    endedAt: 'E',
    exitCode: 0,
    signal: null,
    status: 'finished',
    outcome: 'drained',
    tasks: summary.tasks,
    staging: summary.staging,
    pushed: true,
  });
  t.same(
    finishRun(started, {
      ...ended,
      exitCode: null,
      signal: 'SIGKILL',
      stdout: '',
      stderrTail: 'a\nb\nboom',
      interrupted: true,
    }),
    {
      ...started,
      endedAt: 'E',
      exitCode: null,
      signal: 'SIGKILL',
      status: 'interrupted',
      outcome: 'interrupted',
      tasks: [],
      detail: 'orchestrate was ended by SIGKILL: a | b | boom',
    },
  );
  t.match(finishRun(started, { ...ended, exitCode: 2, stdout: '', stderrTail: 'bad config' }), {
    status: 'finished',
    outcome: 'error',
    detail: 'orchestrate exited 2 without a summary: bad config',
  });
});

const task = (id: string, status: string, dependencies: string[] = []): Task => ({
  id,
  title: id,
  status,
  labels: [],
  dependencies,
  priority: undefined,
  ordinal: undefined,
  assignee: [],
  description: '',
  acceptanceCriteria: [],
  notes: '',
  file: `backlog/tasks/${id}.md`,
});

t.test('board snapshot parsing and combining', async (t) => {
  const oid = 'a'.repeat(40);
  t.same(parseBatchCheck(['x', 'y'], `${oid} tree 10\ny missing\n`), [{ oid, type: 'tree' }, undefined]);
  t.same(
    parseLsTree(
      `100644 blob ${oid}\ttask-1 - A.md\n100644 blob ${'b'.repeat(40)}\tREADME.txt\n040000 tree ${'c'.repeat(40)}\tsub\n`,
    ),
    [[oid, 'task-1 - A.md']],
  );
  t.same(parseBatch(`${oid} blob 5\nhello\n${'b'.repeat(40)} missing\n${'c'.repeat(40)} blob 3\nh\u00e9\n`, 3), [
    'hello',
    '',
    'hé',
  ]);
  const staging: Board = {
    tasks: [task('TASK-1', 'Done'), task('TASK-2', 'To Do', ['TASK-1'])],
    unreadable: [],
    statuses: ['To Do', 'Done'],
  };
  const baseBoard: Board = {
    tasks: [task('TASK-1', 'To Do'), task('TASK-3', 'To Do')],
    unreadable: [],
    statuses: ['To Do', 'Done'],
  };
  t.same(
    combineBoards(staging, baseBoard).tasks.map((x) => `${x.id}:${x.status}`),
    ['TASK-1:Done', 'TASK-2:To Do', 'TASK-3:To Do'],
    'staging wins; new tasks from base are added',
  );
  t.same(combineBoards(undefined, baseBoard), baseBoard);
  t.same(combineBoards(undefined, undefined).tasks, []);
});

t.test('prompt tasks', async (t) => {
  t.equal(titleOf('\n  Fix the login: it 500s  \nmore detail'), 'Fix the login: it 500s');
  t.equal(titleOf('x'.repeat(100)), `${'x'.repeat(77)}...`);
  t.equal(taskFileName(7, 'Fix the: thing/now'), 'task-7 - Fix-the-thing-now.md');
  t.equal(
    nextTaskNumber([
      'backlog/tasks/task-3 - A.md',
      'backlog/completed/task-11 - B.md',
      'backlog/tasks/task-4.1 - C.md',
      'backlog/config.yml',
    ]),
    12,
  );
  t.equal(nextTaskNumber([]), 1);
  const text = promptTaskText({
    id: 'TASK-12',
    prompt: 'Fix the: thing\n\nDetails here.',
    createdMs: Date.parse('2026-11-29T14:41:00Z'),
    labels: ['model:opus'],
  });
  t.equal(
    text,
    "---\nid: TASK-12\ntitle: 'Fix the: thing'\nstatus: To Do\nassignee: []\ncreated_date: '2026-11-29 14:41'\nlabels:\n  - 'model:opus'\ndependencies: []\n---\n\n## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nFix the: thing\n\nDetails here.\n<!-- SECTION:DESCRIPTION:END -->\n",
  );
  const parsed = parseTaskFile('backlog/tasks/task-12 - Fix-the-thing.md', text);
  t.match(parsed, {
    id: 'TASK-12',
    title: 'Fix the: thing',
    status: 'To Do',
    labels: ['model:opus'],
    description: 'Fix the: thing\n\nDetails here.',
  });
});

t.test('the orchestrate command and progress lines', async (t) => {
  const repo: RegistryRepo = {
    name: 'web',
    path: '/srv/web',
    user: 'agent-web',
    baseBranch: 'main',
    proxyPort: 701,
    runnerProxyPort: 700,
    schedule: '* * * * *',
    remotePollSec: 15,
    maxParallel: 3,
    allow: [],
    loopbackPorts: [],
    toolchainPath: '/opt/node/bin:/usr/bin:/bin',
    env: { APP_ENV: 'test' },
    enabled: true,
    url: undefined,
    authorName: undefined,
    authorEmail: undefined,
    limits: RUN_LIMIT_DEFAULTS,
  };
  const command = orchestrateCommand(
    {
      repo,
      state: '/var/lib/agent-runner',
      install: { node: '/usr/bin/node', main: '/opt/agent-runner/dist/src/main.js' },
      orchestrateArgs: ['--task', 'TASK-2'],
      trigger: 'manual',
      progress: 'json',
      runId: 'R1',
    },
    { name: 'agent-web', uid: 1001, gid: 1001, home: '/home/agent-web', shell: '/bin/sh' },
  );
  t.same(command, {
    program: '/usr/bin/node',
    args: [
      '/opt/agent-runner/dist/src/main.js',
      'orchestrate',
      '--workspace',
      '/srv/web',
      '--task',
      'TASK-2',
      '--max-parallel',
      '3',
      '--pass-env',
      'APP_ENV',
      '--json',
      '--run-id',
      'R1',
      '--progress',
      'json',
    ],
    env: {
      APP_ENV: 'test',
      HOME: '/home/agent-web',
      USER: 'agent-web',
      LOGNAME: 'agent-web',
      PATH: '/opt/node/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      http_proxy: 'http://127.0.0.1:700',
      https_proxy: 'http://127.0.0.1:700',
      HTTP_PROXY: 'http://127.0.0.1:700',
      HTTPS_PROXY: 'http://127.0.0.1:700',
      no_proxy: '127.0.0.1,localhost,::1',
      NO_PROXY: '127.0.0.1,localhost,::1',
      AGENT_RUNNER_STATE: '/home/agent-web/.agent-runner',
    },
    cwd: '/srv/web',
  });
  t.equal(
    progressLine('web', '{"event":"task-started","taskId":"TASK-1"}', 'T'),
    '{"event":"task-started","taskId":"TASK-1","repo":"web"}',
  );
  t.equal(progressLine('web', 'plain text', 'T'), '{"event":"log","time":"T","repo":"web","line":"plain text"}');
});
