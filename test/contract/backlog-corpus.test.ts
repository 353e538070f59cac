// A compatibility corpus: task files Backlog.md's own authors wrote (its own
// board, test/fixtures/backlog-corpus), read by the real CLI and by us, and
// compared field by field, readiness included.
import t from 'tap';
import { cpSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realFs } from '../../src/io/real-ports.js';
import { readBoard } from '../../src/board/read.js';
import { assessReadiness } from '../../src/board/readiness.js';
import { labelCheckFor } from '../../src/repo/escalation.js';
import { gitRepo } from '../helpers/temp.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BACKLOG = path.join(root, 'node_modules', '.bin', 'backlog');
const CORPUS = path.join(root, 'test', 'fixtures', 'backlog-corpus');

interface CliTask {
  id: string;
  title: string;
  status: string;
  priority: string | null;
  assignees: string[];
  labels: string[];
  ordinal: number | null;
  acceptanceCriteriaCount: number;
  isReady: boolean;
}

t.test("Backlog.md's own task files: the CLI and we read every field alike", async (t) => {
  const repo = gitRepo(t);
  cpSync(path.join(CORPUS, 'backlog'), path.join(repo, 'backlog'), { recursive: true });
  const files = readdirSync(path.join(repo, 'backlog', 'tasks'));
  t.ok(files.length >= 30, `the sample has ${files.length} task files`);
  const env = {
    PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: repo,
    TZ: 'UTC',
    NO_COLOR: '1',
  };
  const cli = (
    JSON.parse(
      execFileSync(BACKLOG, ['task', 'list', '--json'], {
        cwd: repo,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { tasks: CliTask[] }
  ).tasks;
  t.equal(cli.length, files.length, 'the CLI lists every file');
  const board = await readBoard(realFs, repo);
  t.same(board.unreadable, [], 'we read every file the CLI reads');
  const ready = new Set(assessReadiness(board, labelCheckFor('claude')).ready.map((task) => task.id));
  const ours = new Map(board.tasks.map((task) => [task.id, task]));
  const differences: string[] = [];
  for (const theirs of cli) {
    const task = ours.get(theirs.id);
    if (!task) {
      differences.push(`${theirs.id}: not on our board`);
      continue;
    }
    const fields: [string, unknown, unknown][] = [
      ['title', task.title, theirs.title],
      ['status', task.status, theirs.status],
      ['priority', task.priority ?? null, theirs.priority],
      ['assignees', task.assignee, theirs.assignees],
      ['labels', task.labels, theirs.labels],
      ['ordinal', task.ordinal ?? null, theirs.ordinal],
      ['acceptance criteria', task.acceptanceCriteria.length, theirs.acceptanceCriteriaCount],
      ['ready', ready.has(task.id), theirs.isReady],
    ];
    for (const [name, mine, cliValue] of fields)
      if (JSON.stringify(mine) !== JSON.stringify(cliValue))
        differences.push(`${theirs.id} ${name}: ours ${JSON.stringify(mine)}, the CLI's ${JSON.stringify(cliValue)}`);
  }
  t.same(differences, [], 'no field differs');
  t.ok(
    board.tasks.some((task) => task.assignee.some((name) => name.startsWith('@'))),
    'the sample has the unquoted @handles',
  );
});
