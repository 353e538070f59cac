// The drain's Kubernetes path end to end: a real drain (orchestrate) of a real repo whose attempts run as Jobs on the
// loopback fake API server, the fake kubelet running the Job's real clone step (from `git daemon` serving the
// runner's clone) and a small worker script that prints transcript lines and exits 0 or 3. The pod's half of the
// hand-off (the push token, the worker's env, the pushed result) is played by doubles that record their calls:
// takeResult makes the task's branch as the real one would after its checks. The failure table: an exit code, the
// deadline, an eviction run again uncharged, a bad image, the cluster refusing the Job; a stop and a kill reach the
// deletes; dead runs' objects go at the drain's start.
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { kubeAttempts, type AttemptRef } from '../../backends/kubernetes/drain/index.js';
import { PUSH_TOKEN_KEY } from '../../backends/kubernetes/manifests/spec.js';
import { realControlPorts } from '../../src/io/wire.js';
import { orchestrate } from '../../src/drain/orchestrate.js';
import { Git } from '../../src/git/git.js';
import { readRepoConfig } from '../../src/repo/read-config.js';
import { adapterFor } from '../../src/agent/adapters/index.js';
import { taskBranch, STAGING_BRANCH } from '../../src/staging/names.js';
import { transcriptFile, workspaceStateDir } from '../../src/paths.js';
import type { DrainEvent, DrainSummary } from '../../src/drain/types.js';
import { startFakeKubeApi, type FakeKubeApi, type KubeObject, type Refusal } from '../helpers/fake-kube-api.js';
import { startFakeKubelet, type FakeKubelet } from '../helpers/fake-kubelet.js';
import { aKubernetesRepo, LIMITS } from '../helpers/fake-kube-specs.js';
import { NAMESPACE, aTaskJob } from '../helpers/fake-kube-jobs.js';
import { drainFixture, taskFiles, waitFor, SCRIPTED_AGENT } from '../helpers/drain-fixture.js';
import { gitDaemon } from '../helpers/git-daemon.js';
import { git, tempDir } from '../helpers/temp.js';

const TASK = { id: 'TASK-1', title: 'Add the result' };
const RUN = 'run-k8s-1';

/**
 * The worker in the image: two transcript events, a plain line naming the commit it was cloned at, then its end. With
 * EVICT_ONCE the first pod leaves a mark beside the script (outside every pod's root) and waits to be evicted.
 */
const WORKER = `#!/bin/sh
echo '{"event":"session-start","iteration":1,"program":"scripted","time":"1999-01-01T00:00:00Z"}'
echo '{"event":"output","stream":"stdout","line":"working on '"$AGENT_RUNNER_TASK"' attempt '"$AGENT_RUNNER_ATTEMPT"'"}'
echo "cloned at $(git rev-parse HEAD) for base $AGENT_RUNNER_BASE_COMMIT"
echo "pushing with $AGENT_RUNNER_PUSH_TOKEN"
mark="$(dirname "$0")/first-pod"
if [ -n "$EVICT_ONCE" ] && [ ! -e "$mark" ]; then touch "$mark"; while :; do sleep 0.05; done; fi
if [ -n "$WORKER_SLEEP" ]; then sleep "$WORKER_SLEEP"; fi
exit "\${WORKER_EXIT:-0}"
`;

interface Harness {
  /** The test's folder: the worker script and its mark are here. */
  readonly dir: string;
  readonly api: FakeKubeApi;
  readonly kubelet: FakeKubelet;
  readonly clone: string;
  readonly state: string;
  readonly events: DrainEvent[];
  readonly calls: { issued: AttemptRef[]; revoked: AttemptRef[]; taken: (AttemptRef & { base: string })[] };
  readonly tokens: string[];
  readonly stop: AbortController;
  readonly remote: ReturnType<typeof kubeAttempts>;
  drain(graceMs?: number): Promise<DrainSummary>;
  transcript(): Record<string, unknown>[];
  attempts(): Record<string, { failures: number }>;
}

async function setUp(
  t: Test,
  options: {
    env?: Record<string, string>;
    deadlineSec?: number;
    pullable?: (image: string) => boolean;
    refuse?: Refusal;
    accept?: boolean;
  } = {},
): Promise<Harness> {
  const fixture = drainFixture(t, [TASK], { config: { agentWallClockSec: 600 } });
  const dir = tempDir(t, 'agent-runner-kube-drain-');
  const api = await startFakeKubeApi(t, dir);
  const worker = path.join(dir, 'worker.sh');
  writeFileSync(worker, WORKER);
  chmodSync(worker, 0o755);
  if (options.refuse) api.refuse(options.refuse);
  const kubelet = startFakeKubelet(t, api, {
    namespace: NAMESPACE,
    root: path.join(dir, 'pods'),
    graceMs: 2000,
    imageEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null' },
    ...(options.pullable ? { pullable: options.pullable } : {}),
    // The image's agent-runner is the test's worker script.
    imageBinaries: { 'agent-runner': worker },
  });
  // The runner's read-only git endpoint: its own clone, where auto/work is, served by git daemon.
  const daemon = gitDaemon(t, path.dirname(fixture.clone));
  await daemon.ready();

  const ports = realControlPorts();
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  const jobs = realKubeJobs(config, NAMESPACE);
  const stop = new AbortController();
  const calls: Harness['calls'] = { issued: [], revoked: [], taken: [] };
  const tokens: string[] = [];
  const remote = kubeAttempts({
    jobs,
    clock: ports.clock,
    repo: 'widgets',
    runId: RUN,
    kubernetes: aKubernetesRepo({
      namespace: NAMESPACE,
      gitFetchUrl: daemon.url(path.basename(fixture.clone)),
      gitPushUrl: 'http://127.0.0.1:9/widgets.git',
      proxy: { ip: '127.0.0.1', port: 9 },
    }),
    limits: LIMITS,
    deadlineSec: options.deadlineSec ?? 600,
    baseBranch: STAGING_BRANCH,
    workerEnv: () => options.env ?? {},
    issueToken: async (ref) => {
      calls.issued.push(ref);
      const token = `push-token-${ref.task}-${ref.attempt}`;
      tokens.push(token);
      return token;
    },
    revokeToken: async (ref) => {
      calls.revoked.push(ref);
    },
    takeResult: async (request) => {
      calls.taken.push(request);
      if (options.accept === false)
        return { accepted: false, reason: 'the result ref holds a commit that does not descend from the base' };
      // What the real one leaves after its checks: the task's branch, from the base, with the task Done.
      const work = path.join(dir, `result-${request.attempt}`);
      git(dir, 'clone', '-q', fixture.clone, work);
      git(work, 'checkout', '-q', '-b', taskBranch(request.task), request.base);
      for (const [file, text] of Object.entries(taskFiles([{ ...TASK, status: 'Done' }])))
        writeFileSync(path.join(work, file), text);
      writeFileSync(path.join(work, 'result.txt'), 'made in a pod\n');
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', `${request.task}: the result`);
      git(work, 'push', '-q', 'origin', `${taskBranch(request.task)}:${taskBranch(request.task)}`);
      return { accepted: true, commit: git(work, 'rev-parse', 'HEAD') };
    },
    stop: stop.signal,
    podlessBoundMs: 20_000,
    pollMs: 100,
    retryMs: 50,
  });
  const events: DrainEvent[] = [];
  const repoConfig = (await readRepoConfig(ports.fs, fixture.clone)).config;
  const identity = { name: 'Runner', email: 'runner@example.invalid' };
  const gitRunner = new Git(ports.process, {
    env: fixture.env,
    files: ports.fs,
    startedBy: await ports.control.self(),
  }).withIdentity(identity);
  return {
    dir,
    api,
    kubelet,
    clone: fixture.clone,
    state: fixture.state,
    events,
    calls,
    tokens,
    stop,
    remote,
    drain: (graceMs = 30_000) =>
      orchestrate(ports, gitRunner, {
        workspace: fixture.clone,
        config: repoConfig,
        only: undefined,
        push: false,
        force: false,
        runId: RUN,
        env: fixture.env,
        secrets: [],
        stateDir: fixture.state,
        adapter: adapterFor(repoConfig.assistant),
        binary: SCRIPTED_AGENT,
        onEvent: (event) => events.push(event),
        stop: stop.signal,
        graceMs,
        control: ports.control,
        locks: ports.locks,
        author: identity,
        remote,
      }),
    transcript: () =>
      readFileSync(transcriptFile(fixture.state, fixture.clone, RUN, TASK.id), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    attempts: () => {
      const file = path.join(workspaceStateDir(fixture.state, fixture.clone), 'attempts.json');
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, { failures: number }>) : {};
    },
  };
}

const createdJobs = (api: FakeKubeApi) =>
  api.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/jobs') && r.status === 201)
    .map((r) => r.body as V1Job);

t.test('a task done in a pod: transcript streamed, result taken, task landed, Job and Secret as built', async (t) => {
  const h = await setUp(t);
  const summary = await h.drain();
  t.equal(summary.outcome, 'drained');
  t.match(summary.tasks, [{ id: TASK.id, outcome: 'landed' }]);
  t.ok(git(h.clone, 'log', '--format=%s', STAGING_BRANCH).includes('TASK-1: the result'), 'the result is on auto/work');

  const base = h.calls.taken[0]?.base ?? '';
  t.match(base, /^[0-9a-f]{40}$/);
  t.same(h.calls.issued, [{ repo: 'widgets', run: RUN, task: TASK.id, attempt: 1 }]);
  t.same(h.calls.taken, [{ repo: 'widgets', run: RUN, task: TASK.id, attempt: 1, base }]);
  t.same(h.calls.revoked, h.calls.issued, 'the token revoked once the attempt ended');

  const [job] = createdJobs(h.api);
  const agent = job!.spec!.template.spec!.containers[0]!;
  t.same(job!.metadata!.labels, {
    'app.kubernetes.io/managed-by': 'agent-runner',
    'agent-runner/repo': 'widgets',
    'agent-runner/run': RUN,
    'agent-runner/task': TASK.id,
    'agent-runner/attempt': '1',
  });
  t.same(agent.command, ['agent-runner', 'pod-worker'], 'the worker argv in the image');
  t.same(
    agent.env!.find((e) => e.name === 'AGENT_RUNNER_BASE_COMMIT'),
    { name: 'AGENT_RUNNER_BASE_COMMIT', value: base },
  );
  t.match(
    agent.env!.find((e) => e.name === PUSH_TOKEN_KEY),
    { valueFrom: { secretKeyRef: { name: job!.metadata!.name, key: PUSH_TOKEN_KEY } } },
  );
  t.same(
    h.kubelet.started.map((s) => s.container),
    ['clone', 'agent'],
  );
  t.equal(h.kubelet.started[1]!.env[PUSH_TOKEN_KEY], h.tokens[0], "the Secret's token reached the worker");
  const secretPost = h.api.requests.find((r) => r.method === 'POST' && r.path.endsWith('/secrets'));
  t.equal(
    Buffer.from((secretPost!.body as { data: Record<string, string> }).data[PUSH_TOKEN_KEY]!, 'base64').toString(),
    h.tokens[0],
  );
  t.same(h.api.secrets(NAMESPACE), [], 'the Secret is removed once the Job ended');
  t.equal(h.api.jobs(NAMESPACE).length, 1, 'the completed Job is left to its TTL');

  const lines = h.transcript();
  const fromPod = lines.filter((line) => line.job === job!.metadata!.name);
  t.match(fromPod, [
    { event: 'session-start', iteration: 1, program: 'scripted' },
    { event: 'output', stream: 'stdout', line: `working on ${TASK.id} attempt 1` },
    { event: 'output', stream: 'pod', line: `cloned at ${base} for base ${base}` },
    { event: 'output', stream: 'pod', line: 'pushing with [redacted]' },
  ]);
  t.notOk(JSON.stringify(lines).includes(h.tokens[0]!), 'the push token is redacted from the transcript');
  t.not(fromPod[0]!.time, '1999-01-01T00:00:00Z', "the runtime's time, not the worker's");
  t.ok(
    lines.some(
      (line) => line.stream === 'kubernetes' && String(line.line).startsWith(`Job ${job!.metadata!.name} created`),
    ),
  );
});

// The failure table.
t.test('exit 3: a counted failed attempt each time, with the exit code; parked at maxAttempts', async (t) => {
  const h = await setUp(t, { env: { WORKER_EXIT: '3' } });
  const summary = await h.drain();
  t.match(summary.tasks, [
    {
      id: TASK.id,
      outcome: 'parked',
      reason: /failed 2 time\(s\); last: Job \S+ failed: the agent container exited 3/,
    },
  ]);
  t.same(
    createdJobs(h.api).map((job) => job.metadata!.labels!['agent-runner/attempt']),
    ['1', '2'],
    'each counted attempt its own Job',
  );
  t.same(h.calls.taken, [], 'no result taken');
  t.same(h.calls.revoked.length, 2);
  t.same(h.api.secrets(NAMESPACE), []);
});

t.test('past the deadline: stalled, counted each time', async (t) => {
  const h = await setUp(t, { env: { WORKER_SLEEP: '30' }, deadlineSec: 1 });
  const summary = await h.drain();
  t.match(summary.tasks, [
    { outcome: 'parked', reason: /failed 2 time\(s\); last: .*ran past its deadline \(activeDeadlineSeconds 1\)/ },
  ]);
  t.same(h.kubelet.running(), []);
});

t.test('an eviction: run again as a new Job, no attempt charged, then landed', async (t) => {
  const h = await setUp(t, { env: { EVICT_ONCE: '1' } });
  const drained = h.drain();
  await waitFor(() => existsSync(path.join(h.dir, 'first-pod')), 20_000, 'the first pod running');
  h.kubelet.evict(h.kubelet.pods()[0]!);
  const summary = await drained;
  t.match(summary.tasks, [{ id: TASK.id, outcome: 'landed' }]);
  t.same(
    h.events.filter((e) => e.event.startsWith('task-')).map((e) => e.event),
    ['task-started', 'task-landed'],
    'one trip: no failed attempt, no retry',
  );
  t.same(
    createdJobs(h.api).map((job) => job.metadata!.labels!['agent-runner/attempt']),
    ['1', '2'],
    'a second Job, numbered on',
  );
  t.same(
    h.calls.revoked.map((ref) => ref.attempt),
    [1, 2],
    "each Job's token revoked",
  );
  t.ok(h.transcript().some((line) => /evicted .*run again as a new Job, no attempt charged/.test(String(line.line))));
});

t.test('a bad image: counted each time, Job and Secret deleted', async (t) => {
  const h = await setUp(t, { pullable: () => false });
  const summary = await h.drain();
  t.match(summary.tasks, [{ outcome: 'parked', reason: /failed 2 time\(s\); last: .*cannot start: ErrImagePull/ }]);
  t.same(h.api.jobs(NAMESPACE), []);
  t.same(h.api.secrets(NAMESPACE), []);
});

t.test('a refused result: parked for a human', async (t) => {
  const h = await setUp(t, { accept: false });
  const summary = await h.drain();
  t.match(summary.tasks, [{ outcome: 'parked', reason: /does not descend from the base/ }]);
});

for (const status of [403, 409, 422] as const)
  t.test(`the cluster answers ${status} to the Job: the drain stops, no attempt charged`, async (t) => {
    const h = await setUp(t, { refuse: { method: 'POST', path: /\/jobs$/, status } });
    const summary = await h.drain();
    t.equal(summary.outcome, 'failed');
    t.match(summary.tasks, [
      { outcome: 'failed', reason: new RegExp(`POST /apis/batch/v1/namespaces/${NAMESPACE}/jobs: ${status}`) },
    ]);
    t.match(summary.failure, /TASK-1: Job .* of task TASK-1/);
    t.same(h.attempts()[TASK.id]?.failures ?? 0, 0);
    t.same(h.api.secrets(NAMESPACE), [], 'the Secret created before the refusal is gone');
    t.same(h.calls.revoked.length, 1);
  });

t.test("the drain's stop deletes the running Job with the pod's grace, then its Secret", async (t) => {
  const h = await setUp(t, { env: { WORKER_SLEEP: '60' } });
  const drained = h.drain(100);
  await waitFor(() => h.kubelet.running().length === 1 && h.kubelet.started.length === 2, 20_000, 'the worker');
  h.stop.abort();
  const summary = await drained;
  t.match(summary.tasks, [{ outcome: 'interrupted' }]);
  const deletes = h.api.requests
    .filter((r) => r.method === 'DELETE')
    .map((r) => [r.path.split('/').slice(-2)[0], r.query]);
  t.same(deletes, [
    ['jobs', { propagationPolicy: 'Background' }],
    ['secrets', {}],
  ]);
  await waitFor(() => h.kubelet.running().length === 0, 5000, 'the pod ended');
  t.same(h.attempts()[TASK.id], undefined, 'no attempt recorded');
});

t.test('a kill deletes the Job at once (gracePeriodSeconds 0)', async (t) => {
  const h = await setUp(t, { env: { WORKER_SLEEP: '60' } });
  const drained = h.drain();
  await waitFor(() => h.kubelet.running().length === 1 && h.kubelet.started.length === 2, 20_000, 'the worker');
  h.stop.abort();
  await h.remote.stopAll('kill');
  await drained;
  t.match(
    h.api.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/jobs/')).map((r) => r.query),
    [{ propagationPolicy: 'Background', gracePeriodSeconds: '0' }],
  );
  await waitFor(() => h.kubelet.running().length === 0, 2000, 'the pod killed');
});

t.test("at the drain's start, dead runs' Jobs and Secrets go; a live run's and others' stay", async (t) => {
  const h = await setUp(t);
  const dead = aTaskJob({ repo: 'widgets', run: 'run-dead', task: 'TASK-9', attempt: 1 }, 'ar-dead-1');
  const other = aTaskJob({ repo: 'gadgets', run: 'run-dead', task: 'TASK-9', attempt: 1 }, 'ar-other-1');
  // Stored as objects only: no pod runs for them.
  for (const job of [dead, other]) h.api.put('jobs', NAMESPACE, job as unknown as KubeObject);
  await h.drain();
  const names = h.api.jobs(NAMESPACE).map((job) => job.metadata.name);
  t.notOk(names.includes('ar-dead-1'), "the dead run's Job is gone");
  t.ok(names.includes('ar-other-1'), "another repo's Job stays");
  t.ok(
    h.events.some(
      (e) =>
        e.event === 'recovered' &&
        /removed Job ar-dead-1 of run run-dead/.test(String((e as { detail?: string }).detail)),
    ),
  );
});
