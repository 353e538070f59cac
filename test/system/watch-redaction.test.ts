// The watcher's own sinks redact like the drain's: an error that quotes what
// the repo user wrote (git prints the gitdir of a .git file whole) reaches the
// journal and watch.json with the user's credentials replaced.
import t from 'tap';
import { chownSync, renameSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import { controlFixture, runBin } from '../helpers/control-fixture.js';

const SECRET = 'ghp_redactme0123456789abcdef';

t.test('a tick error quoting a credential is redacted in the journal and in watch.json', async (t) => {
  if (!systemTestMayRun(t, ['setpriv', 'useradd', 'git'])) return;
  const fixture = controlFixture(t, [{ id: 'TASK-1', title: 'First', status: 'To Do' }]);
  const home = execFileSync('getent', ['passwd', fixture.user], { encoding: 'utf8' }).split(':')[5]!;
  const credentials = path.join(home, '.git-credentials');
  writeFileSync(credentials, `https://agent:${SECRET}@example.invalid\n`, { mode: 0o600 });
  const { uid, gid } = statSync(home);
  chownSync(credentials, uid, gid);
  // What an agent can write: its checkout's .git, here a gitdir link that carries the token, which git quotes.
  renameSync(path.join(fixture.clone, '.git'), path.join(fixture.clone, '.git-moved'));
  writeFileSync(path.join(fixture.clone, '.git'), `gitdir: /nonexistent/${SECRET}\n`);

  const watched = await runBin(fixture, 'watch', ['--no-isolation', fixture.name, '--once']);
  t.match(watched.stderr, '"event":"repo-skipped"', 'the tick failed on the bad gitdir');
  t.match(
    watched.stderr,
    'not a git repository: /nonexistent/[redacted]',
    'the journal line names the bad gitdir, redacted',
  );
  t.notMatch(watched.stderr, SECRET, 'the journal never shows the token');
  const status = readFileSync(path.join(fixture.state, 'repos', fixture.name, 'watch.json'), 'utf8');
  const lastError = (JSON.parse(status) as { lastError?: { message: string } }).lastError;
  t.match(lastError?.message, 'not a git repository: /nonexistent/[redacted]');
  t.notMatch(status, SECRET, 'watch.json never shows the token');
});
