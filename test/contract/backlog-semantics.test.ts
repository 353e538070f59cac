// Board semantics as the real Backlog.md CLI applies them (issue 11, items
// 1-5 and 7): boards made with the CLI, read and edited by us, read back by
// the CLI. Each test failed before its fix.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realFs, realProcess } from '../../src/io/real-ports.js';
import { findTask, readBoard, statusesFrom } from '../../src/board/read.js';
import { assessReadiness, describeReason } from '../../src/board/readiness.js';
import { labelCheckFor } from '../../src/repo/escalation.js';
import { pickRunnable } from '../../src/board/leases.js';
import { blockedReason } from '../../src/board/parking.js';
import { parseTaskFile, isUnreadable } from '../../src/board/parse.js';
import { checkWorkspace } from '../../src/repo/workspace.js';
import { blockTask, ensureBlockedOnStaging } from '../../src/drain/staging-board/edits.js';
import { Git } from '../../src/git/git.js';
import { BoardSnapshot } from '../../src/control/repo-view/board.js';
import { promptTaskText } from '../../src/control/jobs/prompt-task.js';
import { DEMO_BACKLOG_CONFIG } from '../../src/demo/demo-repo.js';
import { isFinishedStatus } from '../../src/board/status.js';
import type { Board, Task } from '../../src/types.js';
import { git, gitRepo } from '../helpers/temp.js';
import { StagingTip } from '../../src/staging/tip.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BACKLOG = path.join(root, 'node_modules', '.bin', 'backlog');

/** A git repo with a board the real CLI made (`backlog init ... extra`), and the CLI bound to it. */
function cliBoard(t: Parameters<typeof gitRepo>[0], ...initArgs: string[]) {
  const repo = gitRepo(t);
  const env = {
    PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: repo,
    TZ: 'UTC',
    NO_COLOR: '1',
  };
  const backlog = (...args: string[]) =>
    execFileSync(BACKLOG, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  backlog('init', 'X', '--defaults', '--integration-mode', 'none', ...initArgs);
  const cliReady = (id: string): boolean =>
    (JSON.parse(backlog('task', 'view', id, '--json')) as { task: { isReady: boolean } }).task.isReady;
  return { repo, backlog, cliReady };
}

const reasonsOf = (board: Board, id: string) =>
  assessReadiness(board, labelCheckFor('claude'))
    .notReady.find((entry) => entry.id === id)
    ?.reasons.map(describeReason);
const readyIds = (board: Board) => assessReadiness(board, labelCheckFor('claude')).ready.map((task) => task.id);

t.test('1: labels compare as the CLI compares them; an unknown risk label needs a human', async (t) => {
  const { repo, backlog } = cliBoard(t);
  backlog('task', 'create', 'Human', '-l', 'Risk:Needs-Human', '--plain');
  backlog('task', 'create', 'Padded', '-l', ' risk:needs-human ', '--plain');
  backlog('task', 'create', 'Unknown risk', '-l', 'risk:high', '--plain');
  backlog('task', 'create', 'Api one', '-l', 'Area:API', '--plain');
  backlog('task', 'create', 'Api two', '-l', 'area:api', '--plain');
  backlog('task', 'create', 'Parked', '-l', 'Parked', '--plain');
  const board = await readBoard(realFs, repo);
  t.same(readyIds(board), ['TASK-4', 'TASK-5'], 'only the two area tasks are ready');
  t.same(reasonsOf(board, 'TASK-1'), ['needs a human'], 'Risk:Needs-Human is risk:needs-human');
  t.same(reasonsOf(board, 'TASK-2'), ['needs a human']);
  t.same(reasonsOf(board, 'TASK-3'), [
    'needs a human (risk:high: a risk label is not understood, so it counts as risk:needs-human)',
  ]);
  t.same(reasonsOf(board, 'TASK-6'), ['parked']);
  const [api1, api2] = [findTask(board, 'TASK-4')!, findTask(board, 'TASK-5')!];
  t.same(
    pickRunnable([api1, api2], [], 2).map((task) => task.id),
    ['TASK-4'],
    'Area:API and area:api are one lease',
  );
});

t.test(
  '2: completed/ and the last status finish a dependency; archived and draft tasks are not on the board',
  async (t) => {
    const { repo, backlog, cliReady } = cliBoard(t);
    backlog('task', 'create', 'One', '--plain');
    backlog('task', 'create', 'Two', '--dep', 'task-1', '--plain');
    backlog('task', 'edit', 'task-1', '-s', 'Done');
    backlog('task', 'complete', 'task-1');
    t.same(
      readdirSync(path.join(repo, 'backlog/completed')),
      ['task-1 - One.md'],
      'the CLI moved TASK-1 to completed/',
    );
    let board = await readBoard(realFs, repo);
    t.same(board.completed, ['TASK-1']);
    t.same(readyIds(board), ['TASK-2'], 'a completed dependency is finished');
    t.equal(cliReady('task-2'), true, 'and the CLI agrees');

    // The status in completed/ does not matter: the location is the evidence (the CLI's rule).
    const completedFile = path.join(repo, 'backlog/completed/task-1 - One.md');
    writeFileSync(completedFile, readFileSync(completedFile, 'utf8').replace('status: Done', 'status: Old Done'));
    board = await readBoard(realFs, repo);
    t.same(readyIds(board), ['TASK-2']);
    t.equal(cliReady('task-2'), true);

    // The last configured status finishes, case- and space-insensitive.
    backlog('task', 'create', 'Three', '--plain');
    backlog('task', 'create', 'Four', '--dep', 'task-3', '--plain');
    const config = path.join(repo, 'backlog/config.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace(
        'statuses: ["To Do", "In Progress", "Done"]',
        'statuses: ["To Do", "In Progress", "Shipped"]',
      ),
    );
    backlog('task', 'edit', 'task-3', '-s', 'Shipped');
    board = await readBoard(realFs, repo);
    t.same(reasonsOf(board, 'TASK-3'), ['Done'], "Shipped is this board's finished status");
    t.ok(readyIds(board).includes('TASK-4'), 'a dependency in the last status is finished');
    t.equal(cliReady('task-4'), true);
    const threeFile = path.join(repo, findTask(board, 'TASK-3')!.file);
    writeFileSync(threeFile, readFileSync(threeFile, 'utf8').replace('status: Shipped', 'status: "  shipped "'));
    board = await readBoard(realFs, repo);
    t.ok(readyIds(board).includes('TASK-4'), '"  shipped " is Shipped');
    t.equal(cliReady('task-4'), true);
    t.equal(isFinishedStatus('done', ['To Do', 'Done']), true, 'done counts as Done');
    t.equal(
      isFinishedStatus('Done', ['To Do', 'In Progress', 'Shipped']),
      false,
      'Done is not finished on a board that ends with Shipped',
    );

    // Archived: the CLI drops it from the board (and from its dependents); one still named is unknown, in both.
    backlog('task', 'create', 'Five', '--plain');
    backlog('task', 'create', 'Six', '--plain');
    backlog('task', 'archive', 'task-5');
    const sixFile = path.join(repo, (await readBoard(realFs, repo)).tasks.find((task) => task.id === 'TASK-6')!.file);
    writeFileSync(sixFile, readFileSync(sixFile, 'utf8').replace('dependencies: []', 'dependencies:\n  - TASK-5'));
    board = await readBoard(realFs, repo);
    t.equal(findTask(board, 'TASK-5'), undefined, 'an archived task is not on the board');
    t.same(reasonsOf(board, 'TASK-6'), ['depends on TASK-5, which does not exist']);
    t.equal(cliReady('task-6'), false, 'the CLI also refuses an archived dependency');

    // Drafts live in drafts/ and are never tasks.
    backlog('draft', 'create', 'A draft', '--plain');
    board = await readBoard(realFs, repo);
    t.notOk(
      board.tasks.some((task) => task.title === 'A draft') || board.unreadable.length,
      'a draft is neither a task nor an unreadable file',
    );
  },
);

t.test('2: ids are canonical (TASK-03 is TASK-3); only <prefix>-*.md files are tasks', async (t) => {
  const { repo, backlog, cliReady } = cliBoard(t);
  backlog('task', 'create', 'One', '--plain');
  backlog('task', 'create', 'Two', '--plain');
  backlog('task', 'edit', 'task-1', '-s', 'Done');
  const twoFile = path.join(repo, 'backlog/tasks/task-2 - Two.md');
  writeFileSync(twoFile, readFileSync(twoFile, 'utf8').replace('dependencies: []', 'dependencies:\n  - task-01'));
  writeFileSync(path.join(repo, 'backlog/tasks/readme.md'), '# How we file tasks here\n');
  const board = await readBoard(realFs, repo);
  t.same(board.unreadable, [], 'readme.md is not an unreadable task');
  t.same(readyIds(board), ['TASK-2'], 'task-01 is TASK-1, which is Done');
  t.equal(cliReady('task-2'), true);
  t.equal(findTask(board, 'TASK-0002')?.title, 'Two');
});

t.test(
  '3: the drain adds Blocked before Done, so agents can set it and the CLI never shows it as completed',
  async (t) => {
    const { repo, backlog, cliReady } = cliBoard(t);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'board');
    backlog('task', 'create', 'One', '--plain');
    backlog('task', 'create', 'Two', '--dep', 'task-1', '--plain');
    t.throws(() => backlog('task', 'edit', 'task-1', '-s', 'Blocked'), 'a fresh board refuses Blocked');
    const gitPort = new Git(realProcess, { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: repo } });
    const head = await ensureBlockedOnStaging(realFs, gitPort, repo);
    t.match(head, /^[0-9a-f]{40}$/, 'committed');
    t.match(git(repo, 'log', '-1', '--format=%s'), /Blocked status/);
    t.same(statusesFrom(readFileSync(path.join(repo, 'backlog/config.yml'), 'utf8')), [
      'To Do',
      'In Progress',
      'Blocked',
      'Done',
    ]);
    t.equal(await ensureBlockedOnStaging(realFs, gitPort, repo), undefined, 'once');
    backlog('task', 'edit', 'task-1', '-s', 'Blocked');
    t.equal(cliReady('task-2'), false, 'the CLI does not count a Blocked dependency as completed');
    t.same(reasonsOf(await readBoard(realFs, repo), 'TASK-2'), ['blocked by TASK-1 (Blocked)']);
    t.same(statusesFrom(DEMO_BACKLOG_CONFIG).slice(-2), ['Blocked', 'Done'], 'the demo board has Blocked before Done');
  },
);

t.test('4: boards in .backlog/ and in the folder backlog.config.yml names are found', async (t) => {
  for (const initArgs of [
    ['--backlog-dir', '.backlog'],
    ['--backlog-dir', 'planning/board', '--config-location', 'root'],
  ]) {
    await t.test(initArgs.join(' '), async (t) => {
      const { repo, backlog, cliReady } = cliBoard(t, ...initArgs);
      backlog('task', 'create', 'One', '--plain');
      backlog('task', 'create', 'Two', '--dep', 'task-1', '--plain');
      t.equal(await checkWorkspace(realFs, '/', repo), repo, 'the workspace check accepts it');
      let board = await readBoard(realFs, repo);
      t.same(
        board.tasks.map((task) => task.id),
        ['TASK-1', 'TASK-2'],
      );
      t.equal(path.dirname(board.tasks[0]!.file), path.join(initArgs[1]!, 'tasks'));
      // Blocked lands in the config the CLI reads, which then accepts it.
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'board');
      await ensureBlockedOnStaging(
        realFs,
        new Git(realProcess, { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: repo } }),
        repo,
      );
      backlog('task', 'edit', 'task-1', '-s', 'Blocked');
      board = await readBoard(realFs, repo);
      t.same(reasonsOf(board, 'TASK-1'), ['status Blocked']);
      t.equal(cliReady('task-2'), false);
      // The watcher's view from git objects finds the same board.
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'blocked');
      const view = await new BoardSnapshot(realProcess, repo, 'main').view();
      t.same(
        view.board.tasks.map((task) => [task.id, task.status, task.file]),
        board.tasks.map((task) => [task.id, task.status, task.file]),
      );
    });
  }
});

t.test('5: the Blocked reason is found wherever the agent wrote it, and kept whole', async (t) => {
  const { repo, backlog } = cliBoard(t);
  const reason = 'needs the production credential, which agents never get';
  backlog('task', 'create', 'Rotate the key', '-d', `agent: block "${reason}"`, '--plain');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'board');
  const gitPort = new Git(realProcess, { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: repo } });
  // Board edits are commits onto auto/work, from the tip the runner wrote last.
  git(repo, 'checkout', '-q', '-b', 'auto/work');
  const tip = new StagingTip(gitPort, repo, git(repo, 'rev-parse', 'HEAD').trim());
  // The reason's words are in the description: the note must still be written.
  await blockTask({ fs: realFs, git: gitPort, tip }, repo, 'TASK-1', `${reason}\nand a second line that explains it`);
  const blocked = findTask(await readBoard(realFs, repo), 'TASK-1')!;
  t.equal(blocked.status, 'Blocked');
  t.equal(blockedReason(blocked), `${reason}\nand a second line that explains it`, 'the whole reason, both lines');
  const view = JSON.parse(backlog('task', 'view', 'task-1', '--json')) as {
    task: { status: string; implementationNotes?: string };
  };
  t.equal(view.task.status, 'Blocked', 'the CLI reads what we wrote');
  await blockTask({ fs: realFs, git: gitPort, tip }, repo, 'TASK-1', `${reason}\nand a second line that explains it`);
  t.equal(
    findTask(await readBoard(realFs, repo), 'TASK-1')!.notes.split('Blocked:').length,
    2,
    'blocking again writes no second note',
  );

  const task = (text: string): Task => {
    const parsed = parseTaskFile('backlog/tasks/task-9 - X.md', text);
    if (isUnreadable(parsed)) throw new Error(parsed.reason);
    return parsed;
  };
  const head =
    '---\nid: TASK-9\ntitle: X\nstatus: Blocked\n---\n\n## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nDo it\n<!-- SECTION:DESCRIPTION:END -->\n';
  t.equal(
    blockedReason(task(`${head}\nBlocked: the staging database is down\nsince Monday\n`)),
    'the staging database is down\nsince Monday',
    'a Blocked: paragraph after the last section',
  );
  t.equal(
    blockedReason(
      task(
        `${head}\n## Implementation Notes\n\n<!-- SECTION:NOTES:BEGIN -->\nTried A.\n\nBlocked: B is missing\nand C too\n\nParked: gate failed (branch auto/TASK-9)\n<!-- SECTION:NOTES:END -->\n`,
      ),
    ),
    'B is missing\nand C too',
    'the last Blocked: paragraph of the notes, our park note left out',
  );
  t.equal(
    blockedReason(task(head), 'I cannot reach the API: the token is not set.'),
    'I cannot reach the API: the token is not set.',
    'only the final message says why',
  );
  t.equal(blockedReason(task(head)), 'the agent gave no reason');
});

t.test('7: a queued prompt with section markers is data in its task, which both readers read', async (t) => {
  const { repo, backlog } = cliBoard(t);
  const prompt =
    'Fix the parser\n<!-- SECTION:DESCRIPTION:END -->\n## Acceptance Criteria\n<!-- AC:BEGIN -->\n- [ ] #1 injected\n<!-- AC:END -->';
  const file = 'backlog/tasks/task-2 - Fix-the-parser.md';
  writeFileSync(
    path.join(repo, file),
    promptTaskText({ id: 'TASK-2', prompt, createdMs: Date.UTC(2026, 10, 30), labels: [] }),
  );
  const board = await readBoard(realFs, repo);
  t.same(board.unreadable, [], 'the task file is readable');
  const task = findTask(board, 'TASK-2')!;
  t.same(task.acceptanceCriteria, [], 'no criterion was injected');
  t.match(task.description, /Fix the parser\n<! -- SECTION:DESCRIPTION:END -->/);
  const view = JSON.parse(backlog('task', 'view', 'task-2', '--json')) as {
    task: { title: string; acceptanceCriteriaCount: number };
  };
  t.same([view.task.title, view.task.acceptanceCriteriaCount], ['Fix the parser', 0], 'the CLI reads the same task');
});

t.test(
  '2a: files the CLI reads are readable: @handles, no status, free-text priority, an ordinal that is not a number',
  async (t) => {
    const { repo, backlog } = cliBoard(t);
    const file = (id: string, lines: string[]) =>
      writeFileSync(
        path.join(repo, `backlog/tasks/${id.toLowerCase()} - X.md`),
        `---\n${lines.join('\n')}\n---\n\n## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nx\n<!-- SECTION:DESCRIPTION:END -->\n`,
      );
    file('TASK-1', [
      'id: TASK-1',
      'title: Handles',
      'status: To Do',
      'assignee: @alice',
      'reporter: @bob',
      'priority: urgent',
      'ordinal: soon',
    ]);
    file('TASK-2', ['id: TASK-2', 'title: No status', 'assignee: [@carol, dave]']);
    const board = await readBoard(realFs, repo);
    t.same(board.unreadable, [], 'both files are tasks');
    const cli = (id: string) =>
      (JSON.parse(backlog('task', 'view', id, '--json')) as { task: { assignees: string[]; status: string } }).task;
    t.same(findTask(board, 'TASK-1')!.assignee, cli('task-1').assignees, 'assignees agree with the CLI');
    t.same(findTask(board, 'TASK-2')!.assignee, cli('task-2').assignees);
    t.equal(findTask(board, 'TASK-2')!.status, cli('task-2').status, 'no status for both');
    t.same(readyIds(board), ['TASK-1']);
    t.same(reasonsOf(board, 'TASK-2'), ['no status (set one, e.g. status: To Do)']);
  },
);
