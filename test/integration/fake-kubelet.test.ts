// The fake kubelet itself, with small shell commands as containers, through the real client and the attempt runtime:
// the pod's paths mapped to its own root, Secret values in the env, stdout as the timestamped log; exit codes through
// the podFailurePolicy; a missing Secret key; the deadline; an eviction under FailJob and under Ignore; a Job's
// deletion ending its processes (graceful, and at once); an image that cannot be pulled.
import t, { type Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { V1Container, V1Job } from '@kubernetes/client-node';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { startAttempt } from '../../backends/kubernetes/jobs/attempt.js';
import { realPorts } from '../../src/io/real-ports.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { startFakeKubelet, type FakeKubeletOptions } from '../helpers/fake-kubelet.js';
import { aTaskJob, aTaskSecret, NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/drain-fixture.js';

const of = { repo: 'widgets', run: '20261206T040000000001Z-abc123', task: 'TASK-7', attempt: 1 };
const JOB = 'ar-task-7-1';
const FAIL_ON_EXIT = { action: 'FailJob', onExitCodes: { containerName: 'agent', operator: 'NotIn', values: [0] } };

function aJob(
  agent: Partial<V1Container>,
  options: { init?: Partial<V1Container>; deadline?: number; disruption?: 'Ignore' | 'FailJob' } = {},
): V1Job {
  const job = aTaskJob(of);
  const spec = job.spec!.template.spec!;
  spec.initContainers = [{ ...spec.initContainers![0]!, command: ['sh', '-c', 'true'], ...options.init }];
  spec.containers = [{ ...spec.containers[0]!, ...agent }];
  job.spec!.activeDeadlineSeconds = options.deadline ?? 600;
  job.spec!.podFailurePolicy = {
    rules: [
      ...(options.disruption
        ? [{ action: options.disruption, onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }]
        : []),
      FAIL_ON_EXIT,
    ],
  };
  return job;
}

async function setUp(t: Test, options: Partial<FakeKubeletOptions> = {}) {
  const dir = tempDir(t);
  const api = await startFakeKubeApi(t, dir);
  const kubelet = startFakeKubelet(t, api, {
    namespace: NAMESPACE,
    root: path.join(dir, 'pods'),
    graceMs: 500,
    ...options,
  });
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  const jobs = realKubeJobs(config, NAMESPACE);
  const lines: string[] = [];
  const run = (job: V1Job, withSecret = true) =>
    startAttempt({
      jobs,
      job,
      ...(withSecret ? { secret: aTaskSecret(of) } : {}),
      clock: realPorts().clock,
      podlessBoundMs: 60_000,
      pollMs: 50,
      retryMs: 20,
      onLine: (line) => lines.push(line),
    });
  return { dir, api, kubelet, run, lines };
}

const jobConditions = (api: Awaited<ReturnType<typeof setUp>>['api']) =>
  ((api.job(NAMESPACE, JOB)?.status?.conditions ?? []) as { type: string; reason?: string }[]).map(
    (c) => `${c.type}${c.reason ? `/${c.reason}` : ''}`,
  );

t.test('a pod runs its init step then its agent, in its own root, with the Secret in the env', async (t) => {
  const { api, kubelet, run, lines } = await setUp(t);
  const attempt = await run(
    aJob(
      {
        command: ['sh', '-c', 'echo "home=$HOME token=$token"; cat note; echo "to stderr" >&2; pwd'],
        workingDir: '/work/repo',
        env: [
          { name: 'HOME', value: '/home/agent' },
          { name: 'token', valueFrom: { secretKeyRef: { name: JOB, key: 'token' } } },
        ],
      },
      // A whole argument that is a pod path is mapped; a path inside a shell string is not.
      {
        init: {
          command: ['sh', '-c', 'mkdir -p "$1" && echo cloned > "$1/note" && echo clone done', 'sh', '/work/repo'],
        },
      },
    ),
  );
  t.same(await attempt.outcome, { kind: 'complete' });
  const [pod] = kubelet.pods();
  const root = path.join(path.dirname(kubelet.started[0]!.cwd), pod!);
  t.same(lines.slice(0, 1), [`home=${root}/home token=capability-secret-value`], 'paths mapped, the Secret read');
  t.same(lines.slice(1).sort(), ['cloned', `${root}/work/repo`, 'to stderr'].sort(), 'stdout and stderr are the log');
  t.equal(readFileSync(path.join(root, 'work/repo/note'), 'utf8'), 'cloned\n', 'the init step wrote into /work');
  t.same(
    kubelet.started.map((s) => s.container),
    ['clone', 'agent'],
  );
  t.same(jobConditions(api), ['SuccessCriteriaMet/CompletionsReached', 'Complete/CompletionsReached']);
  const status = api.pods(NAMESPACE)[0]!.status as { phase: string; containerStatuses: { state: unknown }[] };
  t.equal(status.phase, 'Succeeded');
  t.match(status.containerStatuses[0]!.state, { terminated: { exitCode: 0 } });
});

t.test('an exit code fails the Job through its podFailurePolicy; a failed init step by its backoffLimit', async (t) => {
  const { api, run } = await setUp(t);
  const attempt = await run(aJob({ command: ['sh', '-c', 'echo trying; exit 3'] }));
  t.match(await attempt.outcome, {
    kind: 'failed',
    jobActive: false,
    reason: `Job ${JOB} failed: the agent container exited 3: Error`,
  });
  t.same(jobConditions(api), ['FailureTarget/PodFailurePolicy', 'Failed/PodFailurePolicy']);
  t.test('the init step', async (t) => {
    const { api, run, lines } = await setUp(t);
    const attempt = await run(
      aJob({ command: ['sh', '-c', 'echo never'] }, { init: { command: ['sh', '-c', 'exit 128'] } }),
    );
    t.match(await attempt.outcome, { kind: 'failed', reason: /the clone step exited 128/ });
    t.same(jobConditions(api), ['FailureTarget/BackoffLimitExceeded', 'Failed/BackoffLimitExceeded']);
    t.same(lines, [], 'the agent never ran');
  });
});

t.test('a missing Secret key keeps the container on CreateContainerConfigError', async (t) => {
  const { api, kubelet, run } = await setUp(t);
  const attempt = await run(
    aJob({
      command: ['sh', '-c', 'echo ran'],
      env: [{ name: 'X', valueFrom: { secretKeyRef: { name: JOB, key: 'absent' } } }],
    }),
  );
  t.match(await attempt.outcome, {
    kind: 'failed',
    jobActive: true,
    reason: new RegExp(`CreateContainerConfigError: couldn't find key absent in Secret ${NAMESPACE}/${JOB}`),
  });
  t.same(
    kubelet.started.map((s) => s.container),
    ['clone'],
    'the agent never started',
  );
  t.same(api.jobs(NAMESPACE), [], 'the runtime deleted the Job');
  t.test('no Secret at all', async (t) => {
    const { run } = await setUp(t);
    const attempt = await run(
      aJob({ env: [{ name: 'X', valueFrom: { secretKeyRef: { name: JOB, key: 'token' } } }] }),
      false,
    );
    t.match(await attempt.outcome, { kind: 'failed', reason: new RegExp(`secret "${JOB}" not found`) });
  });
});

t.test('past activeDeadlineSeconds the processes end and the Job fails DeadlineExceeded', async (t) => {
  const { api, kubelet, run, dir } = await setUp(t);
  const marker = path.join(dir, 'still-running');
  const attempt = await run(
    aJob({ command: ['sh', '-c', `echo started; sleep 30; touch ${marker}`] }, { deadline: 1 }),
  );
  t.match(await attempt.outcome, { kind: 'stalled', reason: /ran past its deadline \(activeDeadlineSeconds 1\)/ });
  t.same(jobConditions(api), ['FailureTarget/DeadlineExceeded', 'Failed/DeadlineExceeded']);
  t.same(kubelet.running(), []);
  t.notOk(existsSync(marker));
});

t.test('an eviction: FailJob fails the Job as evicted; Ignore runs a replacement pod', async (t) => {
  const loop = ['sh', '-c', 'echo up; while :; do sleep 0.05; done'];
  const { api, kubelet, run } = await setUp(t);
  const attempt = await run(aJob({ command: loop }, { disruption: 'FailJob' }));
  await waitFor(() => kubelet.running().length === 1 && kubelet.started.length === 2, 5000, 'the agent running');
  kubelet.evict(kubelet.pods()[0]!);
  t.match(await attempt.outcome, { kind: 'evicted', reason: /its pod was evicted \(EvictionByEvictionAPI/ });
  t.same(jobConditions(api), ['FailureTarget/PodFailurePolicy', 'Failed/PodFailurePolicy']);
  t.same(kubelet.running(), []);

  t.test('Ignore', async (t) => {
    const { api, kubelet, run, dir } = await setUp(t);
    // The first pod leaves a mark outside the pods and waits to be evicted; the replacement sees it and finishes.
    const mark = path.join(dir, 'first-pod-ran');
    const script = `if [ -e ${mark} ]; then exit 0; fi; touch ${mark}; while :; do sleep 0.05; done`;
    const attempt = await run(aJob({ command: ['sh', '-c', script] }, { disruption: 'Ignore' }));
    await waitFor(() => existsSync(mark), 5000, 'the first pod running');
    kubelet.evict(kubelet.pods()[0]!);
    await waitFor(() => kubelet.pods().length === 2, 5000, 'a replacement pod');
    t.same(await attempt.outcome, { kind: 'complete' }, 'the replacement finished the Job');
    t.same(jobConditions(api), ['SuccessCriteriaMet/CompletionsReached', 'Complete/CompletionsReached']);
  });
});

t.test("deleting the Job ends its pod's processes: SIGTERM with the grace, SIGKILL at once", async (t) => {
  const { dir, kubelet, run } = await setUp(t, { graceMs: 5000 });
  const said = path.join(dir, 'said');
  const attempt = await run(
    aJob({ command: ['sh', '-c', `trap 'echo TERM > ${said}; exit 0' TERM; while :; do sleep 0.05; done`] }),
  );
  await waitFor(() => kubelet.running().length === 1 && kubelet.started.length === 2, 5000, 'the agent running');
  await attempt.stop('stop');
  await waitFor(() => kubelet.running().length === 0, 4000, 'the pod ended within its grace');
  t.equal(readFileSync(said, 'utf8'), 'TERM\n', 'the worker was told to stop');

  t.test('a kill: grace 0', async (t) => {
    const { kubelet, run } = await setUp(t, { graceMs: 60_000 });
    const attempt = await run(aJob({ command: ['sh', '-c', "trap '' TERM; while :; do sleep 0.05; done"] }));
    await waitFor(() => kubelet.running().length === 1 && kubelet.started.length === 2, 5000, 'the agent running');
    await attempt.stop('kill');
    await waitFor(() => kubelet.running().length === 0, 3000, 'the pod killed at once');
    t.pass('killed although it ignores SIGTERM');
  });
});

t.test('an image that cannot be pulled waits on ErrImagePull', async (t) => {
  const { kubelet, run } = await setUp(t, { pullable: (image) => !image.startsWith('registry.invalid/') });
  const attempt = await run(aJob({ command: ['sh', '-c', 'echo never'] }));
  t.match(await attempt.outcome, { kind: 'failed', jobActive: true, reason: /cannot start: ErrImagePull/ });
  t.same(kubelet.started, [], 'nothing ran');
});
