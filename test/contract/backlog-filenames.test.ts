// Task file names we write match the ones the real backlog CLI gives the same titles.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { gitRepo, tempDir } from '../helpers/temp.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { taskFileName } from '../../src/board/render.js';

const TITLES = [
  'Use the greeting: in banner!',
  'v1.2 fix_it now',
  'Hello (world) & co',
  '  spaced   out  ',
  'Ünïcode title ok',
  'Fix the: thing/now',
  'a+b=c, d*e',
];

t.test('taskFileName matches backlog task create', async (t) => {
  const repo = gitRepo(t);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tempDir(t) };
  const backlog = (...args: string[]) =>
    execFileSync(path.join(PROJECT_ROOT, 'node_modules/.bin/backlog'), args, {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  backlog('init', 'Names', '--defaults', '--integration-mode', 'none');
  for (const title of TITLES) backlog('task', 'create', title, '--plain');
  const written = readdirSync(path.join(repo, 'backlog/tasks')).sort(
    (a, b) => Number(a.match(/\d+/)![0]) - Number(b.match(/\d+/)![0]),
  );
  t.same(
    written,
    TITLES.map((title, index) => taskFileName(`TASK-${index + 1}`, title)),
  );
});
