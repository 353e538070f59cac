// A workspace that promotes into a fake GitHub: a bare origin standing in for
// github (the clone's origin URL is a GitHub URL that git rewrites to the
// bare repo with url.<bare>.insteadOf), staging with landed tasks and a parked
// one, a credential store holding the token, and the fake API server whose
// branch heads are the bare repo's real refs.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { Test } from 'tap';
import { git, tempDir, writeFiles } from './temp.js';
import { taskFileText } from './board-builder.js';
import { FakeGitHub } from './fake-github.js';
import { stagingWorktree } from '../../src/paths.js';
import { cli } from './in-process-cli.js';

export interface GitHubFixture {
  readonly workspace: string;
  readonly bare: string;
  readonly fake: FakeGitHub;
  readonly apiUrl: string;
  readonly env: Record<string, string>;
  /** Lands one more task on staging (a merge commit with the runner's trailers) and publishes it. */
  land(taskId: string, title: string): string;
  /** The sha of a branch in the bare origin. */
  sha(branch: string): string | undefined;
  promote(...args: string[]): Promise<{ code: number; out: string; err: string }>;
}

export interface FixtureOptions {
  /** The origin URL the clone names (default https). */
  readonly originUrl?: (host: string) => string;
  readonly host?: string;
  /** API path prefix (GitHub Enterprise: /api/v3). */
  readonly prefix?: string;
  readonly token?: string;
}

const created = '2026-11-30 10:00';

export async function gitHubFixture(t: Test, options: FixtureOptions = {}): Promise<GitHubFixture> {
  const root = tempDir(t, 'agent-runner-github-');
  const host = options.host ?? 'github.example.invalid';
  const token = options.token ?? `ghp_${Math.random().toString(36).slice(2)}`;
  const bare = path.join(root, 'origin.git');
  const workspace = path.join(root, 'widgets');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  git(root, 'clone', '-q', bare, workspace);
  writeFiles(workspace, {
    'README.md': '# widgets\n',
    'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done", "Blocked"]\n',
    'backlog/tasks/task-1 - Add widgets.md': taskFileText({ id: 'TASK-1', title: 'Add widgets', createdDate: created }),
    'backlog/tasks/task-2 - Risky thing.md': taskFileText({ id: 'TASK-2', title: 'Risky thing', createdDate: created }),
  });
  git(workspace, 'add', '-A');
  git(workspace, 'commit', '-q', '-m', 'initial');
  git(workspace, 'push', '-q', 'origin', 'main');
  // Staging lives in its own worktree beside the clone, as a drain leaves it.
  const staging = stagingWorktree(workspace);
  git(workspace, 'worktree', 'add', '-q', '-b', 'auto/work', staging, 'main');
  const url = (options.originUrl ?? ((h) => `https://${h}/acme/widgets.git`))(host);
  git(workspace, 'remote', 'set-url', 'origin', url);
  git(workspace, 'config', `url.${bare}.insteadOf`, url);

  const sha = (branch: string) => {
    try {
      return (
        execFileSync('git', ['--git-dir', bare, 'rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], {
          encoding: 'utf8',
        }).trim() || undefined
      );
    } catch {
      return undefined;
    }
  };
  const land = (taskId: string, title: string) => {
    git(staging, 'checkout', '-q', '-b', `auto/${taskId}`, 'auto/work');
    writeFiles(staging, { [`src/${taskId}.txt`]: `${title}\n` });
    git(staging, 'add', '-A');
    git(staging, 'commit', '-q', '-m', title);
    git(staging, 'checkout', '-q', 'auto/work');
    git(
      staging,
      'merge',
      '-q',
      '--no-ff',
      `auto/${taskId}`,
      '-m',
      `Land ${taskId}: ${title}\n\nAgent-Runner-Task: ${taskId}\nAgent-Runner-Gate: passed (.agent/gates.sh)`,
    );
    git(staging, 'push', '-q', 'origin', 'auto/work');
    return git(staging, 'rev-parse', 'auto/work');
  };
  // TASK-2 is parked on staging's board (label and note, as the drain writes them).
  writeFiles(staging, {
    'backlog/tasks/task-2 - Risky thing.md': taskFileText({
      id: 'TASK-2',
      title: 'Risky thing',
      createdDate: created,
      labels: ['parked'],
      notes: 'Parked: gate red twice (branch auto/TASK-2)',
    }),
  });
  git(staging, 'commit', '-q', '-am', 'Park TASK-2');
  land('TASK-1', 'Add widgets');

  const home = path.join(root, 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, '.gitconfig'), '[credential]\n\thelper = store\n');
  writeFileSync(path.join(home, '.git-credentials'), `https://x-access-token:${token}@${host}\n`, { mode: 0o600 });
  chmodSync(path.join(home, '.git-credentials'), 0o600);

  const fake = new FakeGitHub({
    owner: 'acme',
    repo: 'widgets',
    token,
    branchSha: sha,
    prefix: options.prefix,
    merge: (base, head, method) => {
      const run = (...args: string[]) =>
        execFileSync('git', ['--git-dir', bare, ...args], {
          encoding: 'utf8',
          env: {
            PATH: '/usr/bin:/bin',
            GIT_AUTHOR_NAME: 'GitHub',
            GIT_AUTHOR_EMAIL: 'noreply@github.invalid',
            GIT_COMMITTER_NAME: 'GitHub',
            GIT_COMMITTER_EMAIL: 'noreply@github.invalid',
          },
        }).trim();
      const tree = run('rev-parse', `refs/heads/${head}^{tree}`);
      const parents =
        method === 'merge' ? ['-p', `refs/heads/${base}`, '-p', `refs/heads/${head}`] : ['-p', `refs/heads/${base}`];
      const commit = run('commit-tree', tree, ...parents, '-m', `${method} pull request`);
      run('update-ref', `refs/heads/${base}`, commit);
      return commit;
    },
  });
  const apiUrl = await fake.start(t);
  const env = {
    HOME: home,
    USER: 'root',
    PATH: '/usr/local/bin:/usr/bin:/bin',
    AGENT_RUNNER_STATE: path.join(root, 'state'),
    AGENT_RUNNER_CONFIG: path.join(root, 'no-registry.toml'),
  };
  return {
    workspace,
    bare,
    fake,
    apiUrl,
    env,
    land,
    sha,
    promote: (...args: string[]) => cli(env, ['promote', '--workspace', workspace, '--github-api', apiUrl, ...args]),
  };
}
