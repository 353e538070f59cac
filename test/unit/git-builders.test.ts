// The named git builders keep the exact argv the control plane and the host
// backend ran before they had names: root's reads carry safe.directory for
// that one repo and get their object names on stdin; plumbing is the bare
// argv after `git`.
import t from 'tap';
import {
  catFileBatch,
  catFileBatchCheck,
  existingRefs,
  lsTree,
  revListLeftRightCount,
} from '../../src/git/outsider.js';
import * as plumbing from '../../src/git/plumbing.js';

t.test("root's reads of a repo it does not own", async (t) => {
  const cases: readonly [string, ReturnType<typeof lsTree>, readonly string[], string | undefined][] = [
    [
      'cat-file --batch-check',
      catFileBatchCheck('/srv/web', ['a:x', 'b:y']),
      ['cat-file', '--batch-check'],
      'a:x\nb:y\n',
    ],
    ['cat-file --batch', catFileBatch('/srv/web', ['0a', '0b']), ['cat-file', '--batch'], '0a\n0b\n'],
    ['ls-tree', lsTree('/srv/web', 'abc'), ['ls-tree', '-z', 'abc'], undefined],
    [
      'for-each-ref',
      existingRefs('/srv/web', ['refs/heads/auto/work', 'refs/heads/main']),
      ['for-each-ref', '--format=%(refname)', 'refs/heads/auto/work', 'refs/heads/main'],
      undefined,
    ],
    [
      'rev-list',
      revListLeftRightCount('/srv/web', 'refs/heads/main', 'refs/heads/auto/work'),
      ['rev-list', '--left-right', '--count', 'refs/heads/main...refs/heads/auto/work'],
      undefined,
    ],
  ];
  for (const [name, command, tail, stdin] of cases) {
    t.equal(command.program, 'git', name);
    t.equal(command.cwd, '/srv/web', name);
    t.same(command.args.slice(-tail.length), tail, name);
    t.ok(command.args.includes('safe.directory=/srv/web'), `${name}: only this repo is marked safe`);
    t.equal(command.env.HOME, '/nonexistent', `${name}: no home config`);
    t.equal(command.stdin, stdin, `${name}: stdin`);
  }
});

t.test('plumbing argv', async (t) => {
  const cases: readonly [string, readonly string[], readonly string[]][] = [
    [
      'verifyCommit',
      plumbing.verifyCommitArgs('refs/heads/main'),
      ['rev-parse', '--verify', '--quiet', 'refs/heads/main^{commit}'],
    ],
    ['absoluteGitDir', plumbing.absoluteGitDirArgs(), ['rev-parse', '--absolute-git-dir']],
    [
      'listFileNames',
      plumbing.listFileNamesArgs('c0', 'backlog/'),
      ['ls-tree', '-r', '-z', '--name-only', 'c0', '--', 'backlog/'],
    ],
    ['hashObjectFromStdin', plumbing.hashObjectFromStdinArgs(), ['hash-object', '-w', '--stdin']],
    ['readTree', plumbing.readTreeArgs('c0'), ['read-tree', 'c0']],
    [
      'addBlobToIndex',
      plumbing.addBlobToIndexArgs('b0', 'backlog/tasks/task-1 - X.md'),
      ['update-index', '--add', '--cacheinfo', '100644,b0,backlog/tasks/task-1 - X.md'],
    ],
    ['writeTree', plumbing.writeTreeArgs(), ['write-tree']],
    [
      'commitTree',
      plumbing.commitTreeArgs('t0', 'c0', 'TASK-1: X'),
      ['commit-tree', 't0', '-p', 'c0', '-m', 'TASK-1: X'],
    ],
    [
      'updateRef',
      plumbing.updateRefArgs('refs/heads/auto/work', 'c1', 'c0', 'why'),
      ['update-ref', '-m', 'why', 'refs/heads/auto/work', 'c1', 'c0'],
    ],
    [
      'clone',
      plumbing.cloneArgs('https://example.invalid/r.git', '/home/u/r', 'main'),
      ['clone', '--quiet', '--branch', 'main', '--', 'https://example.invalid/r.git', '/home/u/r'],
    ],
    [
      'setLocalConfig',
      plumbing.setLocalConfigArgs('/home/u/r', 'user.name', 'A'),
      ['-C', '/home/u/r', 'config', '--local', 'user.name', 'A'],
    ],
    ['getConfig', plumbing.getConfigArgs('/home/u/r', 'user.email'), ['-C', '/home/u/r', 'config', 'user.email']],
  ];
  for (const [name, args, expected] of cases) t.same(args, expected, name);
});
