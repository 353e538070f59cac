// Where root's untrusted walk into a repo user's tree starts, and the
// commands that write and commit there as the user.
import t from 'tap';
import { userTreePath, inClone } from '../../backends/host/user-tree.js';
import { gitCommitCommand, writeFileAsUserCommand } from '../../backends/host/users.js';

t.test('a clone in the home is walked from the home', async (t) => {
  t.same(userTreePath('/home/agent-web', '/home/agent-web/web'), { root: '/home/agent-web', relative: 'web' });
  t.same(inClone(userTreePath('/home/agent-web', '/home/agent-web/web'), 'backlog/config.yml'), {
    root: '/home/agent-web',
    relative: 'web/backlog/config.yml',
  });
});

t.test('a clone elsewhere is walked from its parent; a home prefix that is not a parent does not count', async (t) => {
  t.same(userTreePath('/home/agent-web', '/srv/web'), { root: '/srv', relative: 'web' });
  t.same(userTreePath('/home/agent-web', '/home/agent-web2/web'), { root: '/home/agent-web2', relative: 'web' });
  t.same(userTreePath(undefined, '/home/agent-web/web'), { root: '/home/agent-web', relative: 'web' });
  t.same(userTreePath('/home/agent-web', '/home/agent-web'), { root: '/home', relative: 'agent-web' });
});

t.test('the board file is written as the user, the text on stdin, never in argv', async (t) => {
  const command = writeFileAsUserCommand(
    'agent-web',
    '/home/agent-web',
    '/home/agent-web/web/backlog/config.yml',
    'statuses: [x]\n',
    0o644,
  );
  t.equal(command.program, 'setpriv');
  t.match(command.args, ['--reuid=agent-web']);
  t.equal(command.stdin, 'statuses: [x]\n');
  t.notOk(
    command.args.some((arg) => arg.includes('statuses')),
    'the text is not in argv',
  );
  t.same(command.args.slice(-3), ['agent-runner-write', '/home/agent-web/web/backlog/config.yml', '644']);
  t.match(
    command.args.join(' '),
    /mv -f -T --/,
    'a rename over the target: a link there is replaced, never written through',
  );
});

t.test('the board commit is plumbing with repo programs off for every git it starts', async (t) => {
  const command = gitCommitCommand(
    'agent-web',
    '/home/agent-web',
    '/home/agent-web/web',
    'backlog/config.yml',
    'Board: add the Blocked status',
  );
  const args = command.args.join('\n');
  t.match(args, /GIT_CONFIG_COUNT=2/);
  t.match(args, /GIT_CONFIG_KEY_0=core\.hooksPath\nGIT_CONFIG_VALUE_0=\/dev\/null/);
  t.match(args, /GIT_CONFIG_KEY_1=core\.fsmonitor\nGIT_CONFIG_VALUE_1=false/);
  t.match(args, /hash-object -w --no-filters/);
  t.notMatch(args, /git (add|commit) /, 'no porcelain add or commit (they run hooks and filters)');
});
