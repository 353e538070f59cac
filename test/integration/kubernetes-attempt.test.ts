// One attempt as a Job against the loopback fake API server, the test playing the Job controller and the kubelet:
// created, its log read whole, its completion returned; a bad image fails it and deletes its Job; a stop deletes it.
import t, { type Test } from 'tap';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { startAttempt } from '../../backends/kubernetes/jobs/attempt.js';
import { realPorts } from '../../src/io/real-ports.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { aTaskJob, aTaskSecret, NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { tempDir } from '../helpers/temp.js';

const of = { repo: 'widgets', run: '20261206T040000000001Z-abc123', task: 'TASK-7', attempt: 1 };
const JOB = 'ar-task-7-1';
const POD = 'ar-task-7-1-x1';

/**
 * The fake API server, and `start`: one attempt of TASK-7's Job through the real client, with short pauses; the
 * Secret, the pod bound and where the log lines go as each case wants them.
 */
async function setUp(t: Test) {
  const api = await startFakeKubeApi(t, tempDir(t));
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  const jobs = realKubeJobs(config, NAMESPACE);
  const start = (
    options: { secret?: boolean; podlessBoundMs?: number; onLine?: (line: string) => void } = {},
  ): ReturnType<typeof startAttempt> =>
    startAttempt({
      jobs,
      job: aTaskJob(of),
      ...(options.secret ? { secret: aTaskSecret(of) } : {}),
      clock: realPorts().clock,
      podlessBoundMs: options.podlessBoundMs ?? 60_000,
      pollMs: 20,
      retryMs: 10,
      onLine: options.onLine ?? (() => undefined),
    });
  return { api, start };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const running = { name: 'agent', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } };
const exited = (exitCode: number, message?: string) => ({
  ...running,
  ready: false,
  state: { terminated: { exitCode, ...(message ? { message } : {}) } },
});

t.test('a completed attempt: log read whole, outcome complete, the Job left to its TTL', async (t) => {
  const { api, start } = await setUp(t);
  const lines: string[] = [];
  const attempt = await start({ secret: true, onLine: (line) => lines.push(line) });
  t.equal(api.secrets(NAMESPACE).length, 1);
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Running', containerStatuses: [running] });
  api.writeLog(NAMESPACE, POD, 'agent', '2026-12-06T04:00:00.1Z', 'working');
  await until(() => lines.length === 1, 'the first line');
  api.writeLog(NAMESPACE, POD, 'agent', '2026-12-06T04:00:01.1Z', 'done');
  api.endLog(NAMESPACE, POD, 'agent');
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Succeeded', containerStatuses: [exited(0)] });
  api.setJobStatus(NAMESPACE, JOB, { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 });
  t.same(await attempt.outcome, { kind: 'complete' });
  t.same(lines, ['working', 'done']);
  t.same(
    api.requests.filter((r) => r.method === 'DELETE'),
    [],
    'a finished Job is left to ttlSecondsAfterFinished',
  );
});

t.test('a failed agent: its exit code and message', async (t) => {
  const { api, start } = await setUp(t);
  const attempt = await start();
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Failed', containerStatuses: [exited(3, 'no result')] });
  api.endLog(NAMESPACE, POD, 'agent');
  api.setJobStatus(NAMESPACE, JOB, {
    conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
  });
  t.same(await attempt.outcome, {
    kind: 'failed',
    jobActive: false,
    reason: `Job ${JOB} failed: the agent container exited 3: no result`,
    agentExit: { code: 3, message: 'no result' },
  });
});

t.test('a bad image fails the attempt and deletes its Job and Secret', async (t) => {
  const { api, start } = await setUp(t);
  const attempt = await start({ secret: true });
  api.setPod(NAMESPACE, JOB, POD, {
    phase: 'Pending',
    containerStatuses: [{ ...running, ready: false, state: { waiting: { reason: 'ErrImagePull' } } }],
  });
  const outcome = await attempt.outcome;
  t.match(outcome, { kind: 'failed', jobActive: true, reason: /ErrImagePull/ });
  t.same(api.jobs(NAMESPACE), []);
  t.same(api.secrets(NAMESPACE), []);
});

t.test('a Job without a pod past the bound fails on the timer, with no event', async (t) => {
  const { api, start } = await setUp(t);
  const attempt = await start({ podlessBoundMs: 0 });
  // The fake stamps creation in whole seconds: the bound is passed within a second.
  t.match(await attempt.outcome, { kind: 'failed', jobActive: true, reason: /no pod was created within 0 s/ });
  t.same(api.jobs(NAMESPACE), []);
});

t.test('a stop deletes the Job gracefully and its Secret; the outcome says stopped', async (t) => {
  const { api, start } = await setUp(t);
  const attempt = await start({ secret: true });
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Running', containerStatuses: [running] });
  await until(() => api.openLogs() === 1, 'the log followed');
  await attempt.stop('stop');
  t.same(await attempt.outcome, { kind: 'stopped', how: 'stop' });
  t.same(
    api.requests.filter((r) => r.method === 'DELETE').map((r) => [r.path.split('/').slice(-2).join('/'), r.query]),
    [
      [`jobs/${JOB}`, { propagationPolicy: 'Background' }],
      [`secrets/${JOB}`, {}],
    ],
  );
  await until(() => api.openLogs() === 0, 'the log closed');
});

t.test('a pod deleted past the deadline (as the Job controller does) still ends the attempt, stalled', async (t) => {
  const { api, start } = await setUp(t);
  const lines: string[] = [];
  const attempt = await start({ onLine: (line) => lines.push(line) });
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Running', containerStatuses: [running] });
  api.writeLog(NAMESPACE, POD, 'agent', '2026-12-06T04:00:00.1Z', 'working');
  await until(() => lines.length === 1, 'the first line');
  // The stream drops, and the pod is gone before it is asked for again: the next request is a 404.
  api.dropLogStreams();
  const deleted = await fetch(`${api.url}/api/v1/namespaces/${NAMESPACE}/pods/${POD}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${api.token}` },
  });
  t.equal(deleted.status, 200);
  api.setJobStatus(NAMESPACE, JOB, {
    conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }],
  });
  t.match(await attempt.outcome, { kind: 'stalled', reason: /ran past its deadline/ });
  t.same(lines, ['working']);
});
