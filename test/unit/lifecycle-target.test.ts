// Who runs status/promote/discard/gc: root never in a checkout a user controls.
import t from 'tap';
import {
  chooseLifecycleRunner,
  rootMayRunIn,
  type PathStep,
  type WorkspaceFacts,
} from '../../src/control/dispatch/lifecycle-target.js';
import { aRepo } from '../helpers/host-fixtures.js';
import type { Registry } from '../../src/types.js';

const alpha = aRepo('alpha', { path: '/srv/repos/alpha' });
const registry = { registry: { repos: [alpha] } as unknown as Registry, file: '/etc/agent-runner/registry.toml' };
const request = (over: Partial<Parameters<typeof chooseLifecycleRunner>[0]> = {}) => ({
  command: 'status',
  uid: 0,
  cwd: '/root',
  repoOption: undefined,
  workspaceOption: undefined,
  ...over,
});
const dir = (path: string, uid = 0, mode = 0o40755): PathStep => ({
  path,
  uid,
  mode,
  isSymlink: false,
  isDirectory: true,
});
const link = (path: string, uid: number): PathStep => ({
  path,
  uid,
  mode: 0o120777,
  isSymlink: true,
  isDirectory: false,
});
const facts = (
  steps: PathStep[],
  dotGit: PathStep | undefined = dir(`${steps.at(-1)!.path}/.git`, steps.at(-1)!.uid),
): WorkspaceFacts => ({ steps, dotGit, names: { 1001: 'agent-beta' } });

t.test('root with --repo, or the exact registered path, runs as the repo user', async (t) => {
  t.same(chooseLifecycleRunner(request({ repoOption: 'alpha' }), registry, undefined), {
    kind: 'as-repo-user',
    repo: alpha,
  });
  t.same(
    chooseLifecycleRunner(request({ workspaceOption: '/srv/repos/alpha/' }), registry, undefined),
    { kind: 'as-repo-user', repo: alpha },
    'a trailing slash is the same path',
  );
  t.same(
    chooseLifecycleRunner(request({ cwd: '/srv/repos', workspaceOption: 'alpha' }), registry, undefined),
    { kind: 'as-repo-user', repo: alpha },
    'relative to cwd',
  );
  t.throws(
    () => chooseLifecycleRunner(request({ repoOption: 'nope' }), registry, undefined),
    /repos\.nope: no such repo; registered repos: alpha/,
  );
  t.throws(
    () => chooseLifecycleRunner(request({ repoOption: 'alpha', workspaceOption: '/x' }), registry, undefined),
    /give --repo NAME or --workspace DIR, not both/,
  );
  t.throws(
    () => chooseLifecycleRunner(request({ repoOption: 'alpha' }), undefined, undefined),
    /--repo needs the registry/,
  );
});

t.test('a non-root caller runs in place; --repo only names the path', async (t) => {
  t.same(chooseLifecycleRunner(request({ uid: 1001, repoOption: 'alpha' }), registry, undefined), {
    kind: 'in-place',
    workspace: '/srv/repos/alpha',
  });
  t.same(chooseLifecycleRunner(request({ uid: 1001, workspaceOption: 'w' }), undefined, undefined), {
    kind: 'in-place',
    workspace: 'w',
  });
});

t.test('root on an unregistered workspace: only a root-owned one runs in place', async (t) => {
  const rootOwned = facts([dir('/srv'), dir('/srv/mine')]);
  t.same(chooseLifecycleRunner(request({ workspaceOption: '/srv/mine' }), registry, rootOwned), {
    kind: 'in-place',
    workspace: '/srv/mine',
  });
  t.same(
    chooseLifecycleRunner(request({ workspaceOption: '/srv/mine' }), undefined, rootOwned),
    { kind: 'in-place', workspace: '/srv/mine' },
    'no registry needed',
  );
  t.equal(
    rootMayRunIn('/tmp/x', facts([dir('/tmp', 0, 0o41777), dir('/tmp/x')])),
    undefined,
    'a sticky world-writable parent is fine',
  );

  const userOwned = facts([dir('/home'), dir('/home/agent-beta', 1001), dir('/home/agent-beta/repo', 1001)]);
  t.throws(() => chooseLifecycleRunner(request({ workspaceOption: '/home/agent-beta/repo' }), registry, userOwned), {
    message:
      "status: refusing to run as root in /home/agent-beta/repo: /home/agent-beta belongs to agent-beta (uid 1001), and it is not a registered repo's path. Root never runs git in a checkout a user controls (its config, hooks and remotes would run as root). Use --repo NAME for a registered repo (it runs as the repo's user), or run it as agent-beta (runuser -u agent-beta -- agent-runner status --workspace /home/agent-beta/repo)",
  });
  t.match(
    rootMayRunIn('/srv/x', facts([dir('/srv'), dir('/srv/x')], dir('/srv/x/.git', 1001))),
    /\/srv\/x\/\.git belongs to agent-beta \(uid 1001\)/,
    'a user-owned .git in a root-owned folder',
  );
  t.match(
    rootMayRunIn('/srv/x', facts([dir('/srv', 0, 0o40777), dir('/srv/x')])),
    /\/srv can be written by users other than root/,
  );
  t.match(
    rootMayRunIn('/srv/x', { steps: [dir('/srv'), link('/srv/x', 1001)], dotGit: undefined, names: {} }),
    /\/srv\/x is a symbolic link \(owned by uid 1001\); root does not follow links/,
  );
  t.match(
    rootMayRunIn('/srv/alpha-link', { steps: [dir('/srv'), link('/srv/alpha-link', 0)], dotGit: undefined, names: {} }),
    /symbolic link/,
    'even a link to a registered path is not followed to decide',
  );
  t.match(
    rootMayRunIn('/srv/gone', { steps: [dir('/srv')], dotGit: undefined, names: {} }),
    /\/srv\/gone does not exist/,
  );
});
