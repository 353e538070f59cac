// A repo with backend = "kubernetes" drained end to end with nothing played
// by the test but the cluster: the real `agent-runner orchestrate` CLI, given
// the repo's settings as dispatch gives them (--kubernetes), drives the real
// @kubernetes/client-node against the loopback fake API server; the fake
// kubelet runs the Job's clone step (git clone from `git daemon` serving the
// runner's checkout) and the real `agent-runner pod-worker` with the scripted
// agent; the worker pushes its result through the runner's results endpoint
// (`git http-backend`) with its attempt's token; the drain takes the result
// through the hand-off's checks, the integrator and the gate land it.
import t from 'tap';
import { chmodSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import { realPorts } from '../../src/io/real-ports.js';
import { listenResults } from '../../src/io/results/server.js';
import { Git } from '../../src/git/git.js';
import { STAGING_BRANCH } from '../../src/staging/names.js';
import { transcriptFile } from '../../src/paths.js';
import { kubernetesRunArg } from '../../src/control/dispatch/kubernetes-arg.js';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { pushTokensDir, resultsRepository, serveResults } from '../../backends/kubernetes/results/index.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { startFakeKubelet } from '../helpers/fake-kubelet.js';
import { aKubernetesRepo, LIMITS } from '../helpers/fake-kube-specs.js';
import { NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { AGENT_RUNNER, drainFixture, landedOn, runOrchestrate } from '../helpers/drain-fixture.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { git, GIT_TEST_ENV, tempDir } from '../helpers/temp.js';

const REPO = 'widgets';

t.test('a task done in a pod lands on auto/work through the pushed result; a blocked one says why', async (t) => {
  const fixture = drainFixture(
    t,
    [
      { id: 'TASK-1', title: 'Greet', status: 'To Do', description: 'agent: write greeting.txt "hello from a pod"' },
      { id: 'TASK-2', title: 'Migrate', status: 'To Do', description: 'agent: block "needs a database"' },
    ],
    { config: { agentWallClockSec: 600 } },
  );
  const dir = tempDir(t, 'agent-runner-kube-e2e-');
  const api = await startFakeKubeApi(t, dir);
  // The image's agent-runner: this checkout's, run by this node.
  const image = path.join(dir, 'agent-runner');
  writeFileSync(image, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_RUNNER)} "$@"\n`);
  chmodSync(image, 0o755);
  const kubelet = startFakeKubelet(t, api, {
    namespace: NAMESPACE,
    root: path.join(dir, 'pods'),
    graceMs: 2000,
    imageEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null', LANG: 'C.UTF-8' },
    imageBinaries: { 'agent-runner': image },
  });
  // The runner's read-only git endpoint (its checkout, where auto/work is) and its results endpoint.
  const daemon = gitDaemon(t, path.dirname(fixture.clone));
  await daemon.ready();
  const ports = realPorts();
  const results = await serveResults({
    git: new Git(ports.process, { env: GIT_TEST_ENV }),
    fs: ports.fs,
    listen: listenResults,
    state: fixture.state,
    repo: REPO,
    port: 0,
    path: GIT_TEST_ENV.PATH!,
    log: () => undefined,
  });
  t.teardown(() => results.close());

  // The operator's Secret with the agent's credential, in the namespace: the kubelet reads it, the runner never does.
  const login = 'login-token-of-the-agent';
  await realKubeJobs(
    loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE }),
    NAMESPACE,
  ).createSecret({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'agent-login' },
    data: { AGENT_LOGIN_TOKEN: Buffer.from(login).toString('base64') },
  });
  const settings = aKubernetesRepo({
    agentSecret: { name: 'agent-login', keys: ['AGENT_LOGIN_TOKEN'] },
    cluster: { kind: 'context', context: 'fake', kubeconfig: api.kubeconfig },
    namespace: NAMESPACE,
    gitFetchUrl: daemon.url(path.basename(fixture.clone)),
    gitPushUrl: `http://127.0.0.1:${results.port}/${REPO}.git`,
    proxy: { ip: '127.0.0.1', port: 9 },
  });
  const run = await runOrchestrate(fixture, [
    '--drain',
    '--run-id',
    'run-e2e-1',
    '--kubernetes',
    kubernetesRunArg({ repo: REPO, settings, limits: LIMITS }),
  ]);
  t.equal(run.code, 0, run.stderr.slice(-3000));
  const summary = JSON.parse(run.stdout) as {
    outcome: string;
    tasks: { id: string; outcome: string; reason?: string }[];
  };
  t.equal(summary.outcome, 'drained');
  const byId = Object.fromEntries(summary.tasks.map((task) => [task.id, task]));
  t.match(byId['TASK-1'], { outcome: 'landed' });
  t.match(byId['TASK-2'], { outcome: 'blocked', reason: /needs a database/ }, "the agent's reason, from the pod");
  t.notMatch(
    String(byId['TASK-2']?.reason),
    /^Job /,
    "the worker's own words (its termination message), not the Job's",
  );
  t.same(landedOn(fixture.clone, STAGING_BRANCH), ['TASK-1'], 'landed on auto/work by the integrator');
  t.equal(git(fixture.clone, 'show', `${STAGING_BRANCH}:greeting.txt`), 'hello from a pod', "the pod's work");

  // One Job, as built, and its two containers run by the kubelet: the clone step, then the worker.
  const jobs = api.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/jobs') && r.status === 201)
    .map((r) => r.body as V1Job);
  t.same(jobs.map((job) => job.metadata?.labels?.['agent-runner/task']).sort(), ['TASK-1', 'TASK-2'], 'a Job a task');
  t.match(jobs[0]?.metadata?.labels, { 'agent-runner/repo': REPO, 'agent-runner/run': 'run-e2e-1' });
  const clones = kubelet.started.filter((started) => started.container === 'clone');
  const workers = kubelet.started.filter((started) => started.container === 'agent');
  t.equal(clones.length, 2, 'a clone step a pod');
  t.ok(clones[0]?.argv.includes(daemon.url(path.basename(fixture.clone))), 'cloned from the git endpoint');
  t.same(
    workers.map((worker) => worker.argv.slice(-1)[0]),
    ['pod-worker', 'pod-worker'],
    'the worker is agent-runner pod-worker',
  );

  // The pod's log is the task's transcript: the worker's own events, the agent's session.
  const transcript = readFileSync(transcriptFile(fixture.state, fixture.clone, 'run-e2e-1', 'TASK-1'), 'utf8');
  const events = transcript
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { event: string }).event);
  t.ok(events.includes('session-start') && events.includes('session-end'), `the session is there: ${events.join(' ')}`);
  const agentSide = workers.find((worker) => worker.env.AGENT_RUNNER_TASK === 'TASK-1');
  const token = agentSide?.env.AGENT_RUNNER_PUSH_TOKEN ?? '';
  t.match(token, /^ar1\.TASK-1\.1\./, 'the worker got its attempt token from the Secret');
  t.notOk(transcript.includes(token), 'the token is in no transcript line');
  t.equal(agentSide?.env.AGENT_LOGIN_TOKEN, login, "the agent container got the credential from the operator's Secret");
  t.notOk(
    clones.some((clone) => 'AGENT_LOGIN_TOKEN' in clone.env),
    'the clone step did not',
  );
  t.match(
    JSON.parse(agentSide?.env.AGENT_RUNNER_POD_WORKER ?? '{}'),
    { secretEnv: ['AGENT_LOGIN_TOKEN'] },
    'the worker passes it to the agent, redacted',
  );
  t.notOk(transcript.includes(login), 'the credential is in no transcript line');

  // Taken once, then gone: no result ref left, the token revoked.
  t.equal(
    git(resultsRepository(fixture.state, REPO), 'for-each-ref', 'refs/agent-runner/results/'),
    '',
    'the result ref is deleted once taken',
  );
  t.same(readdirSync(pushTokensDir(fixture.state, REPO)), [], 'the push token is revoked');
});
