// The pod worker in a clone, as a Job's agent container runs it: the
// scripted agent as the command agent, settings from podWorkerEnv, the push
// through the real results endpoint (git http-backend on loopback). Done:
// the result ref holds the agent's commit, every stdout line is JSON (the
// transcript's events, then the worker's end), the token is printed nowhere.
// Blocked: no push, its exit code, the reason in the termination log. A clone
// not at the base is refused naming both commits; bad settings name the
// variable.
import t, { type Test } from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realPorts } from '../../src/io/real-ports.js';
import { listenResults } from '../../src/io/results/server.js';
import { Git } from '../../src/git/git.js';
import { DEFAULT_CONFIG } from '../../src/repo/config.js';
import {
  issuePushToken,
  pushTokensDir,
  resultsRepository,
  serveResults,
} from '../../backends/kubernetes/results/index.js';
import {
  POD_WORKER_EXIT,
  POD_WORKER_VARIABLE,
  podWorkerEnding,
  podWorkerEnv,
  readPodWorkerSettings,
  runPodWorker,
} from '../../backends/kubernetes/worker/index.js';
import { PUSH_TOKEN_KEY, resultRef } from '../../backends/kubernetes/index.js';
import { git, GIT_TEST_ENV, tempDir } from '../helpers/temp.js';
import { BLOCKED_CONFIG, SCRIPTED_AGENT, taskFiles } from '../helpers/drain-fixture.js';

const ports = realPorts();

async function pod(t: Test, description: string) {
  const root = tempDir(t, 'agent-runner-pod-');
  const origin = path.join(root, 'origin');
  git(root, 'init', '-q', '-b', 'main', origin);
  const files: Record<string, string> = {
    'README.md': '# pod\n',
    'backlog/config.yml': BLOCKED_CONFIG,
    ...taskFiles([{ id: 'TASK-1', title: 'Greet', status: 'To Do', description }]),
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(origin, name)), { recursive: true });
    writeFileSync(path.join(origin, name), text);
  }
  git(origin, 'add', '-A');
  git(origin, 'commit', '-q', '-m', 'board');
  const base = git(origin, 'rev-parse', 'HEAD');
  const clone = path.join(root, 'work', 'repo');
  git(root, 'clone', '-q', '--no-tags', '--single-branch', '--branch', 'main', origin, clone);
  const home = path.join(root, 'home');
  mkdirSync(home);
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Agent\n\temail = agent@example.invalid\n');
  const state = path.join(root, 'state');
  const listener = await serveResults({
    git: new Git(ports.process, { env: GIT_TEST_ENV }),
    fs: ports.fs,
    listen: listenResults,
    state,
    repo: 'web',
    port: 0,
    path: GIT_TEST_ENV.PATH!,
    log: () => undefined,
  });
  t.teardown(() => listener.close());
  const token = await issuePushToken(ports.fs, pushTokensDir(state, 'web'), { task: 'TASK-1', attempt: 1 });
  const terminationLog = path.join(root, 'termination-log');
  const config = {
    ...DEFAULT_CONFIG,
    assistant: 'command' as const,
    command: [SCRIPTED_AGENT],
    agentIdleTimeoutSec: 30,
  };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: path.join(root, 'tmp'),
    AGENT_RUNNER_REPO: 'web',
    AGENT_RUNNER_RUN: 'run-1',
    AGENT_RUNNER_TASK: 'TASK-1',
    AGENT_RUNNER_ATTEMPT: '1',
    AGENT_RUNNER_BASE_COMMIT: base,
    AGENT_RUNNER_PUSH_URL: `http://127.0.0.1:${listener.port}/web.git`,
    AGENT_RUNNER_RESULT_REF: resultRef('TASK-1', 1),
    AGENT_RUNNER_TERMINATION_LOG: terminationLog,
    [PUSH_TOKEN_KEY]: token,
    ...podWorkerEnv(config, SCRIPTED_AGENT, { author: { name: 'Repo Author', email: 'author@example.invalid' } }),
  };
  mkdirSync(env.TMPDIR!);
  writeFileSync(terminationLog, ''); // the kubelet makes it before the container starts
  const lines: string[] = [];
  const run = (overrides: Record<string, string> = {}) =>
    runPodWorker({ ports, cwd: clone, out: (line) => lines.push(line) }, { ...env, ...overrides });
  return { clone, base, token, lines, run, terminationLog, results: resultsRepository(state, 'web') };
}

function resultIn(results: string): string | undefined {
  const out = git(results, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/agent-runner/results/');
  return out === '' ? undefined : out;
}

t.test('done: the task branch is pushed to the result ref, the transcript is the stdout', async (t) => {
  const p = await pod(t, 'agent: write greeting.txt "hello"');
  const code = await p.run();
  t.equal(code, POD_WORKER_EXIT.done, p.lines.join('\n'));
  const head = git(p.clone, 'rev-parse', 'HEAD');
  t.not(head, p.base, 'the agent committed');
  t.equal(
    git(p.clone, 'log', '-1', '--format=%an <%ae>', head),
    'Repo Author <author@example.invalid>',
    "the commit is by the repo's author, not the image's git identity",
  );
  t.equal(git(p.results, 'rev-parse', resultRef('TASK-1', 1)), head, 'the result ref is the clone HEAD');
  const events = p.lines.map((line) => JSON.parse(line) as { event: string; ending?: string });
  t.same(
    [...new Set(events.map((e) => e.event))],
    ['pod-worker-start', 'run-start', 'session-start', 'output', 'session-end', 'run-end', 'pod-worker-end'],
  );
  t.equal(events.at(-1)!.ending, 'done');
  t.notOk(p.lines.join('\n').includes(p.token), 'the token is in no line');
  t.match(
    readFileSync(p.terminationLog, 'utf8'),
    /^done: pushed [0-9a-f]{40} to refs\/agent-runner\/results\/TASK-1\/1\n$/,
  );
});

t.test('blocked: nothing is pushed; the exit code and the reason say so', async (t) => {
  const p = await pod(t, 'agent: block "needs a database"');
  const code = await p.run();
  t.equal(code, POD_WORKER_EXIT.blocked);
  t.equal(podWorkerEnding(code), 'blocked');
  t.equal(resultIn(p.results), undefined, 'no result ref');
  t.match(readFileSync(p.terminationLog, 'utf8'), /^blocked: .*needs a database/);
});

t.test('an agent that fails: its exit code, nothing pushed', async (t) => {
  const p = await pod(t, 'agent: exit 3');
  t.equal(await p.run(), POD_WORKER_EXIT.agentFailed);
  t.equal(resultIn(p.results), undefined);
});

t.test('a clone not at the base commit is refused before anything runs', async (t) => {
  const p = await pod(t, 'agent: write greeting.txt "hello"');
  const other = 'f'.repeat(40);
  const code = await p.run({ AGENT_RUNNER_BASE_COMMIT: other });
  t.equal(code, POD_WORKER_EXIT.baseMismatch);
  const reason = readFileSync(p.terminationLog, 'utf8');
  t.match(reason, new RegExp(`is at ${p.base}, and AGENT_RUNNER_BASE_COMMIT ${other} is not in its history`));
  t.equal(git(p.clone, 'rev-parse', 'HEAD'), p.base, 'the agent never ran');
  t.equal(resultIn(p.results), undefined);
});

t.test('a clone ahead of the base (another task landed meanwhile): the task works from its base', async (t) => {
  const p = await pod(t, 'agent: write greeting.txt "hello"');
  writeFileSync(path.join(p.clone, 'landed.txt'), 'another task\n');
  git(p.clone, 'add', 'landed.txt');
  git(p.clone, 'commit', '-q', '-m', 'another task landed');
  const code = await p.run();
  t.equal(code, POD_WORKER_EXIT.done, p.lines.join('\n'));
  const result = git(p.results, 'rev-parse', resultRef('TASK-1', 1));
  t.equal(git(p.results, 'rev-parse', `${result}^`), p.base, "the result's parent is the task's base");
  t.equal(git(p.results, 'ls-tree', '--name-only', result, 'landed.txt'), '', "the other task's file is not in it");
});

t.test('a refused push is its own exit code, the token redacted', async (t) => {
  const p = await pod(t, 'agent: write greeting.txt "hello"');
  const code = await p.run({ AGENT_RUNNER_RESULT_REF: resultRef('TASK-9', 1) });
  t.equal(code, POD_WORKER_EXIT.pushRefused, p.lines.join('\n'));
  t.match(
    readFileSync(p.terminationLog, 'utf8'),
    /^pushRefused: the push of [0-9a-f]{40} to refs\/agent-runner\/results\/TASK-9\/1/,
  );
  t.notOk(p.lines.join('\n').includes(p.token));
});

t.test('settings: a bad value names the variable and the fix; a missing termination log path is fine', async (t) => {
  const p = await pod(t, 'agent: write greeting.txt "hello"');
  const code = await p.run({
    [POD_WORKER_VARIABLE]: '{"version":1,"config":{"assistant":"nobody"},"binary":"x","iterations":0,"passEnv":[]}',
    AGENT_RUNNER_TERMINATION_LOG: '/nonexistent-dir/termination-log',
  });
  t.equal(code, POD_WORKER_EXIT.settings);
  const end = JSON.parse(p.lines.at(-1)!) as { reason: string };
  t.match(end.reason, /^AGENT_RUNNER_POD_WORKER: .*config\.assistant: .*iterations: must be a whole number 1-100/);
  t.match(end.reason, /podWorkerEnv/);
  t.throws(() => readPodWorkerSettings({}), /AGENT_RUNNER_POD_WORKER: is not set/);
  t.throws(() => readPodWorkerSettings({ [POD_WORKER_VARIABLE]: '{' }), /is not JSON/);
  const good = readPodWorkerSettings(podWorkerEnv(DEFAULT_CONFIG, 'claude', { retryReason: 'again' }));
  t.equal(good.config.assistant, 'claude');
  t.equal(good.retryReason, 'again');
  t.throws(
    () => podWorkerEnv(DEFAULT_CONFIG, 'claude', { author: { name: 'A <b>', email: 'nope' } }),
    /author: must be \{"name": a name without <, > or newlines/,
  );
});
