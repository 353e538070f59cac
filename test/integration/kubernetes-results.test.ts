// The results endpoint and taking a result, with real git: a loopback
// server over `git http-backend` for the runner's results repository, pushed
// to by git with the worker's own push command (the token in git's
// environment config). The right token creates its attempt's ref; a wrong or
// revoked token, another ref, a delete, a second push, a fetch and an
// oversized push are each refused and leave the repository as it was. The
// hook alone (a push that never passed the server) refuses too. takeResult
// turns a pushed result into the task's branch only through the hand-off's
// checks.
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { realPorts } from '../../src/io/real-ports.js';
import { listenResults } from '../../src/io/results/server.js';
import { Git } from '../../src/git/git.js';
import {
  issuePushToken,
  pushTokensDir,
  resultsRepository,
  revokePushToken,
  serveResults,
  takeResult,
  type ResultsListener,
} from '../../backends/kubernetes/results/index.js';
import { resultPushCommand } from '../../backends/kubernetes/worker/index.js';
import { resultRef } from '../../backends/kubernetes/index.js';
import { git, GIT_TEST_ENV, tempDir } from '../helpers/temp.js';

const ports = realPorts();
const runnerGit = new Git(ports.process, { env: GIT_TEST_ENV });

interface Setup {
  readonly state: string;
  readonly runner: string;
  readonly pod: string;
  readonly base: string;
  readonly results: string;
  readonly url: string;
  readonly events: { event: string; fields: Record<string, unknown> }[];
}

/** The runner's repository at a base, a pod's clone one commit ahead, and the endpoint serving repo "web". */
async function setup(t: Test, maxBodyBytes?: number): Promise<Setup> {
  const root = tempDir(t, 'agent-runner-results-');
  const runner = path.join(root, 'runner');
  git(root, 'init', '-q', '-b', 'main', runner);
  writeFileSync(path.join(runner, 'README'), 'base\n');
  git(runner, 'add', '-A');
  git(runner, 'commit', '-q', '-m', 'base');
  const base = git(runner, 'rev-parse', 'HEAD');
  const pod = path.join(root, 'pod');
  git(root, 'clone', '-q', runner, pod);
  writeFileSync(path.join(pod, 'work.txt'), 'done\n');
  git(pod, 'add', '-A');
  git(pod, 'commit', '-q', '-m', 'TASK-1 done');
  const state = path.join(root, 'state');
  const events: Setup['events'] = [];
  const listener: ResultsListener = await serveResults({
    git: runnerGit,
    fs: ports.fs,
    listen: listenResults,
    state,
    repo: 'web',
    port: 0,
    path: GIT_TEST_ENV.PATH!,
    log: (event, fields = {}) => events.push({ event, fields }),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
  });
  t.teardown(() => listener.close());
  return {
    state,
    runner,
    pod,
    base,
    results: resultsRepository(state, 'web'),
    url: `http://127.0.0.1:${listener.port}/web.git`,
    events,
  };
}

/** git push from the pod with the worker's own command: HEAD (or `source`) to `ref`, the token in git's env. */
async function push(s: Setup, token: string, ref: string, source = 'HEAD') {
  const command = resultPushCommand({ cwd: s.pod, url: s.url, ref, token, env: GIT_TEST_ENV });
  const args = command.args.map((arg) => (arg === `HEAD:${ref}` ? `${source}:${ref}` : arg));
  const result = await ports.process.run({ ...command, args });
  return { ...result, output: `${result.stdout}\n${result.stderr}` };
}

function refsIn(repo: string): string {
  return git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
}

const ref1 = resultRef('TASK-1', 1);

t.test('the right token creates its own result ref, with the commit pushed', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  const pushed = await push(s, token, ref1);
  t.equal(pushed.exitCode, 0, pushed.output);
  t.equal(git(s.results, 'rev-parse', ref1), git(s.pod, 'rev-parse', 'HEAD'));
  t.notOk(pushed.output.includes(token), 'git never prints the token');
  const recorded = readFileSync(path.join(pushTokensDir(s.state, 'web'), 'TASK-1.1'), 'utf8');
  t.match(recorded, /^[0-9a-f]{64}\n$/, 'only the hash of the token is on disk');
  t.notOk(recorded.includes(token.split('.').at(-1)!));
});

t.test('a wrong token is 401 with its reason, and pushes nothing', async (t) => {
  const s = await setup(t);
  const real = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  const forged = `${real.slice(0, -4)}AAAA`;
  const answer = await fetch(`${s.url}/info/refs?service=git-receive-pack`, {
    headers: { authorization: `Bearer ${forged}` },
  });
  t.equal(answer.status, 401);
  t.match(await answer.text(), /the push token was refused/);
  const none = await fetch(`${s.url}/info/refs?service=git-receive-pack`);
  t.equal(none.status, 401);
  t.match(await none.text(), /Authorization: Bearer TOKEN/);
  const pushed = await push(s, forged, ref1);
  t.not(pushed.exitCode, 0);
  t.equal(refsIn(s.results), '', 'the results repository holds no ref');
});

t.test('a revoked token is refused', async (t) => {
  const s = await setup(t);
  const dir = pushTokensDir(s.state, 'web');
  const token = await issuePushToken(ports.fs, dir, { task: 'TASK-1', attempt: 1 });
  await revokePushToken(ports.fs, dir, { task: 'TASK-1', attempt: 1 });
  const pushed = await push(s, token, ref1);
  t.not(pushed.exitCode, 0);
  t.equal(refsIn(s.results), '');
});

t.test('the right token is refused for another ref, a delete and a second push', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  for (const other of [resultRef('TASK-2', 1), resultRef('TASK-1', 2), 'refs/heads/main']) {
    const pushed = await push(s, token, other);
    t.not(pushed.exitCode, 0, `${other} is refused`);
    t.match(pushed.output, /403/, `${other}: the server's status`);
  }
  t.equal(refsIn(s.results), '', 'nothing was created');
  t.ok(
    s.events.some(
      (e) =>
        e.event === 'results-refused' &&
        /may create refs\/agent-runner\/results\/TASK-1\/1 only/.test(String(e.fields.message)),
    ),
    'the refusal names the one ref the token may create',
  );

  t.equal((await push(s, token, ref1)).exitCode, 0, 'its own ref is taken');
  const first = git(s.results, 'rev-parse', ref1);
  writeFileSync(path.join(s.pod, 'more.txt'), 'more\n');
  git(s.pod, 'add', '-A');
  git(s.pod, 'commit', '-q', '-m', 'again');
  const again = await push(s, token, ref1, '+HEAD');
  t.not(again.exitCode, 0, 'a second push to the same ref is refused');
  const deleted = await push(s, token, ref1, '');
  t.not(deleted.exitCode, 0, 'a delete is refused');
  t.equal(git(s.results, 'rev-parse', ref1), first, 'the result is as first pushed');
  t.ok(s.events.some((e) => /exists already/.test(String(e.fields.message))));
  t.ok(s.events.some((e) => /may not be deleted/.test(String(e.fields.message))));
});

t.test('nothing is fetched through the endpoint', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  t.equal((await push(s, token, ref1)).exitCode, 0);
  const answer = await fetch(`${s.url}/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(answer.status, 403);
  t.match(await answer.text(), /pushes only/);
  const dumb = await fetch(`${s.url}/HEAD`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(dumb.status, 404);
  // Async: the endpoint runs in this process, so a synchronous git would hold it up.
  const fetched = await ports.process.run({
    program: 'git',
    args: ['-c', `http.extraHeader=Authorization: Bearer ${token}`, 'fetch', s.url, `${ref1}:refs/stolen`],
    env: GIT_TEST_ENV,
    cwd: s.runner,
  });
  t.not(fetched.exitCode, 0, fetched.stderr);
  t.match(fetched.stderr, /pushes only/, "git shows the endpoint's reason");
});

t.test('a push past the cap is refused, and nothing is kept', async (t) => {
  const s = await setup(t, 64 * 1024);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  writeFileSync(path.join(s.pod, 'big.bin'), randomBytes(512 * 1024));
  git(s.pod, 'add', '-A');
  git(s.pod, 'commit', '-q', '-m', 'big');
  const pushed = await push(s, token, ref1);
  t.not(pushed.exitCode, 0, pushed.output);
  t.equal(refsIn(s.results), '');
  t.ok(
    s.events.some((e) => e.event === 'results-refused' && e.fields.status === 413),
    JSON.stringify(s.events),
  );
});

t.test("git itself refuses through the results repository's hook", async (t) => {
  const s = await setup(t);
  const local = (ref: string, env: Record<string, string>) =>
    spawnSync('git', ['push', s.results, `HEAD:${ref}`], {
      cwd: s.pod,
      env: { ...GIT_TEST_ENV, ...env },
      encoding: 'utf8',
    });
  const other = local(resultRef('TASK-2', 1), { AGENT_RUNNER_RESULT_REF: ref1 });
  t.not(other.status, 0);
  t.match(other.stderr, /agent-runner: refused: this push may create refs\/agent-runner\/results\/TASK-1\/1 only/);
  const unnamed = local(ref1, {});
  t.not(unnamed.status, 0);
  t.match(unnamed.stderr, /no result ref was named/);
  const own = local(ref1, { AGENT_RUNNER_RESULT_REF: ref1 });
  t.equal(own.status, 0, own.stderr);
  const twice = spawnSync('git', ['push', '--force', s.results, `HEAD~1:${ref1}`], {
    cwd: s.pod,
    env: { ...GIT_TEST_ENV, AGENT_RUNNER_RESULT_REF: ref1 },
    encoding: 'utf8',
  });
  t.not(twice.status, 0);
  t.match(twice.stderr, /exists already|denying non-fast-forward/);
});

t.test('a pushed result becomes the task branch through the hand-off checks; the result ref is gone', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  t.equal((await push(s, token, ref1)).exitCode, 0);
  const scratch = tempDir(t, 'agent-runner-scratch-');
  const deps = { git: runnerGit, fs: ports.fs, workspace: s.runner, results: s.results, scratch, maxBytes: 1 << 20 };
  const taken = await takeResult(deps, { task: 'TASK-1', attempt: 1, base: s.base });
  t.same(taken, { accepted: true, commit: git(s.pod, 'rev-parse', 'HEAD') });
  t.equal(git(s.runner, 'rev-parse', 'refs/heads/auto/TASK-1'), git(s.pod, 'rev-parse', 'HEAD'));
  t.equal(refsIn(s.results), '', 'the result ref is deleted once taken');
  const again = await takeResult(deps, { task: 'TASK-1', attempt: 1, base: s.base });
  t.equal(again.accepted, false);
  t.match(!again.accepted && again.reason, /nothing was pushed to refs\/agent-runner\/results\/TASK-1\/1/);
});

t.test('a result that does not descend from the base is refused; no branch is made', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  git(s.pod, 'checkout', '-q', '--orphan', 'elsewhere');
  writeFileSync(path.join(s.pod, 'other.txt'), 'unrelated\n');
  git(s.pod, 'add', '-A');
  git(s.pod, 'commit', '-q', '-m', 'unrelated history');
  t.equal((await push(s, token, ref1)).exitCode, 0);
  const scratch = tempDir(t, 'agent-runner-scratch-');
  const deps = { git: runnerGit, fs: ports.fs, workspace: s.runner, results: s.results, scratch, maxBytes: 1 << 20 };
  const taken = await takeResult(deps, { task: 'TASK-1', attempt: 1, base: s.base });
  t.equal(taken.accepted, false);
  t.match(!taken.accepted && taken.reason, /does not descend from/);
  t.equal(
    spawnSync('git', ['rev-parse', '--verify', '--quiet', 'refs/heads/auto/TASK-1'], { cwd: s.runner }).status,
    1,
  );
  t.equal(refsIn(s.results), '');
});

t.test('an oversized result is refused by the hand-off bound', async (t) => {
  const s = await setup(t);
  const token = await issuePushToken(ports.fs, pushTokensDir(s.state, 'web'), { task: 'TASK-1', attempt: 1 });
  writeFileSync(path.join(s.pod, 'big.bin'), randomBytes(256 * 1024));
  git(s.pod, 'add', '-A');
  git(s.pod, 'commit', '-q', '-m', 'big');
  t.equal((await push(s, token, ref1)).exitCode, 0);
  const scratch = tempDir(t, 'agent-runner-scratch-');
  const deps = { git: runnerGit, fs: ports.fs, workspace: s.runner, results: s.results, scratch, maxBytes: 64 * 1024 };
  const taken = await takeResult(deps, { task: 'TASK-1', attempt: 1, base: s.base });
  t.equal(taken.accepted, false);
  t.match(!taken.accepted && taken.reason, /refused/);
  t.equal(
    spawnSync('git', ['rev-parse', '--verify', '--quiet', 'refs/heads/auto/TASK-1'], { cwd: s.runner }).status,
    1,
  );
});
