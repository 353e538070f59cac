// The watcher's check of origin (issue 11, item 0): the commands are the repo
// user's and carry its proxy; what origin answers decides whether to fetch.
import t from 'tap';
import {
  checkRemote,
  fetchBaseCommand,
  judgeRemote,
  lsRemoteCommand,
  parseLsRemote,
  REMOTE_TIMEOUT_SEC,
} from '../../src/control/watch/remote.js';
import { parseRegistry } from '../../src/control/registry/parse.js';
import { DEFAULT_REMOTE_POLL_SEC } from '../../src/control/registry/keys.js';
import { cronScheduler } from '../../src/io/cron.js';
import type { UserAccount } from '../../src/control/repo-user/privdrop.js';
import { aRepo } from '../helpers/host-fixtures.js';
import { fakeProcess } from '../helpers/fake-ports.js';

const user: UserAccount = {
  name: 'agent-web',
  uid: 1201,
  gid: 1201,
  home: '/home/agent-web',
  shell: '/usr/sbin/nologin',
};
const repo = aRepo('web', { path: '/home/agent-web/web', proxyPort: 712, runnerProxyPort: 713, baseBranch: 'trunk' });
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

t.test('ls-remote and fetch run as the repo user, through its proxy, with no repo program and a timeout', async (t) => {
  const command = lsRemoteCommand(user, repo);
  t.equal(command.program, 'setpriv');
  t.same(command.args.slice(0, 4), ['--reuid=1201', '--regid=1201', '--init-groups', '--no-new-privs']);
  const afterEnv = command.args.slice(command.args.indexOf('timeout'));
  t.same(afterEnv.slice(0, 4), ['timeout', '--kill-after=5', String(REMOTE_TIMEOUT_SEC), 'git']);
  t.same(afterEnv.slice(-4), ['ls-remote', '--quiet', 'origin', 'refs/heads/trunk']);
  t.ok(afterEnv.includes('core.hooksPath=/dev/null'), 'no hook');
  t.ok(
    command.args.includes('https_proxy=http://127.0.0.1:713') && command.args.includes('HOME=/home/agent-web'),
    "the user's home and the runner's proxy port (the git host's)",
  );
  t.equal(command.cwd, '/home/agent-web/web');
  t.same(fetchBaseCommand(user, repo).args.slice(-5), [
    'fetch',
    '--quiet',
    '--no-tags',
    'origin',
    '+refs/heads/trunk:refs/remotes/origin/trunk',
  ]);
});

t.test('what origin says', async (t) => {
  t.equal(parseLsRemote(`${A}\trefs/heads/trunk\n`, 'trunk'), A);
  t.equal(parseLsRemote(`${A}\trefs/heads/trunk-old\n`, 'trunk'), undefined);
  t.equal(parseLsRemote('', 'trunk'), undefined);
  t.same(judgeRemote(A, A), { kind: 'unchanged' });
  t.same(judgeRemote(B, A), { kind: 'moved', from: A, to: B });
  t.same(judgeRemote(B, undefined), { kind: 'moved', from: undefined, to: B }, 'never fetched: fetch');
  t.same(judgeRemote(undefined, A), { kind: 'no-branch' });
});

t.test('checkRemote fetches only when origin moved, and names the failure', async (t) => {
  const answers = (remote: string, local: string) =>
    fakeProcess({
      run: (command) => {
        if (command.args.includes('ls-remote'))
          return { exitCode: 0, signal: null, stdout: `${remote}\trefs/heads/trunk\n`, stderr: '' };
        if (command.args.includes('rev-parse')) return { exitCode: 0, signal: null, stdout: `${local}\n`, stderr: '' };
        return { exitCode: 0, signal: null, stdout: '', stderr: '' };
      },
    });
  const still = answers(A, A);
  t.same(await checkRemote(still, user, repo), { kind: 'unchanged' });
  t.notOk(
    still.ran.some((command) => command.args.includes('fetch')),
    'no fetch when nothing moved',
  );
  const moved = answers(B, A);
  t.same(await checkRemote(moved, user, repo), { kind: 'moved', from: A, to: B });
  t.ok(moved.ran.at(-1)!.args.includes('fetch'), 'then fetched');
  const down = fakeProcess({ run: () => ({ exitCode: 124, signal: null, stdout: '', stderr: '' }) });
  await t.rejects(
    checkRemote(down, user, repo),
    /git ls-remote origin \(as agent-web, in \/home\/agent-web\/web\) failed \(timed out after 60 s\)/,
  );
});

t.test('remote_poll_sec: a default, per repo or in [defaults], 0 turns it off, bad values named', async (t) => {
  const parse = (extra: string, defaults = '') =>
    parseRegistry(`${defaults}[repos.web]\npath = "/srv/web"\nproxy_port = 700\n${extra}`, 'reg.toml', cronScheduler);
  t.equal(parse('').registry.repos[0]!.remotePollSec, DEFAULT_REMOTE_POLL_SEC);
  t.equal(parse('remote_poll_sec = 0\n').registry.repos[0]!.remotePollSec, 0);
  t.equal(parse('', '[defaults]\nremote_poll_sec = 5\n').registry.repos[0]!.remotePollSec, 5);
  t.match(
    parse('remote_poll_sec = -1\n').problems.map((problem) => `${problem.key}: ${problem.problem}`),
    ['repos.web.remote_poll_sec: must be an integer 0-3600, got -1'],
  );
  t.equal(parse('remote_poll_sec = "10"\n').problems.length, 1);
});
