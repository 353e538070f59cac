// The Job watch and the log follower over the real client against the loopback fake API server: a watch the server
// closes, or answers 410, between a Job's creation and its completion loses no completion; a log stream dropped
// mid-way is taken up again from its last time, and the transcript has every line once, redacted.
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { watchJobs, type JobChange } from '../../backends/kubernetes/jobs/watch.js';
import { followLog, transcriptLine } from '../../backends/kubernetes/jobs/logs.js';
import { repoSelector } from '../../backends/kubernetes/labels.js';
import { Transcript } from '../../src/agent/transcript.js';
import { realPorts } from '../../src/io/real-ports.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { aTaskJob, NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { tempDir } from '../helpers/temp.js';

const attempt = { repo: 'widgets', run: '20261206T040000000001Z-abc123', task: 'TASK-7', attempt: 1 };
const JOB = 'ar-task-7-1';
const POD = 'ar-task-7-1-x1';

async function setUp(t: Test) {
  const dir = tempDir(t);
  const api = await startFakeKubeApi(t, dir);
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  return { dir, api, jobs: realKubeJobs(config, NAMESPACE), clock: realPorts().clock };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const completed = (job: V1Job) => job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');

async function watching(t: Test, setup: Awaited<ReturnType<typeof setUp>>) {
  const seen: [string, JobChange, boolean][] = [];
  const troubles: string[] = [];
  const watch = await watchJobs({
    jobs: setup.jobs,
    labelSelector: repoSelector('widgets'),
    clock: setup.clock,
    retryMs: 10,
    onJob: (job, change) => seen.push([job.metadata?.name ?? '', change, Boolean(completed(job))]),
    onTrouble: (error) => troubles.push(error.message),
  });
  t.teardown(() => watch.stop());
  return { watch, seen, troubles };
}

const watchRequests = (api: Awaited<ReturnType<typeof startFakeKubeApi>>) =>
  api.requests.filter((r) => r.query.watch === 'true');

t.test('a watch the server closes is taken up from the last resourceVersion; the completion arrives', async (t) => {
  const setup = await setUp(t);
  const { api, jobs } = setup;
  const { watch, seen, troubles } = await watching(t, setup);
  await until(() => api.openWatches() === 1, 'the watch');
  const created = await jobs.createJob(aTaskJob(attempt));
  await until(() => seen.length === 1, 'ADDED');
  api.closeWatches();
  api.setJobStatus(NAMESPACE, JOB, { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 });
  await until(() => seen.some(([, , done]) => done), 'the completion');
  await watch.stop();
  t.same(seen, [
    [JOB, 'ADDED', false],
    [JOB, 'MODIFIED', true],
  ]);
  t.equal(watch.lists(), 1, 'no relist was needed');
  const [, second] = watchRequests(api);
  t.equal(second?.query.resourceVersion, created.metadata?.resourceVersion, 'the second watch starts at the ADDED');
  t.same(troubles, []);
});

t.test('a 410 between creation and completion lists again, and the list shows the Job complete', async (t) => {
  const setup = await setUp(t);
  const { api, jobs } = setup;
  const { watch, seen, troubles } = await watching(t, setup);
  await until(() => api.openWatches() === 1, 'the watch');
  await jobs.createJob(aTaskJob(attempt));
  await until(() => seen.length === 1, 'ADDED');
  api.closeWatches();
  api.setJobStatus(NAMESPACE, JOB, { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 });
  api.compact();
  await until(() => seen.some(([, , done]) => done), 'the completion');
  await watch.stop();
  t.same(seen.at(-1), [JOB, 'listed', true], 'the relist reported it complete');
  t.equal(watch.lists(), 2);
  t.same(troubles, [], 'a 410 is routine, not trouble');
});

t.test('a bookmark moves the resourceVersion on, so a compaction behind it needs no relist', async (t) => {
  const setup = await setUp(t);
  const { api, jobs } = setup;
  const { watch, seen } = await watching(t, setup);
  await until(() => api.openWatches() === 1, 'the watch');
  await jobs.createJob(aTaskJob(attempt));
  await jobs.createJob(aTaskJob({ ...attempt, repo: 'other' }, 'ar-other-1'));
  await until(() => seen.length === 1, 'ADDED');
  api.bookmark();
  await new Promise((resolve) => setTimeout(resolve, 100));
  api.compact();
  api.closeWatches();
  await until(() => watchRequests(api).length === 2 && api.openWatches() === 1, 'the second watch');
  api.setJobStatus(NAMESPACE, JOB, { conditions: [{ type: 'Complete', status: 'True' }] });
  await until(() => seen.some(([, , done]) => done), 'the completion');
  await watch.stop();
  t.equal(watch.lists(), 1);
  t.same(
    seen.map(([name]) => name),
    [JOB, JOB],
    "another repo's Job is not seen",
  );
});

t.test('a broken watch (a refused list) is retried until the API server answers', async (t) => {
  const setup = await setUp(t);
  const { api, jobs } = setup;
  const { watch, seen, troubles } = await watching(t, setup);
  await until(() => api.openWatches() === 1, 'the watch');
  api.compact();
  api.refuse({ method: 'GET', path: /\/jobs$/, status: 403, times: 2 });
  api.closeWatches();
  await jobs.createJob(aTaskJob(attempt));
  api.setJobStatus(NAMESPACE, JOB, { conditions: [{ type: 'Complete', status: 'True' }] });
  await until(() => seen.some(([, , done]) => done), 'the completion');
  await watch.stop();
  t.ok(troubles.length >= 1, 'the refusals were reported');
  t.match(troubles[0], /403.*grant the runner's account the RBAC/);
});

t.test('a log dropped mid-way reaches the transcript whole: no line lost, none twice, secrets redacted', async (t) => {
  const setup = await setUp(t);
  const { api, jobs, dir } = setup;
  await jobs.createJob(aTaskJob(attempt));
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Running' });
  const file = path.join(dir, 'transcript.jsonl');
  const ports = realPorts();
  const transcript = new Transcript(ports.fs, ports.clock, file, ['s3cret-capability-value']);
  const lines: string[] = [];
  const troubles: string[] = [];
  const write = transcriptLine(transcript, POD);
  const follower = followLog({
    jobs,
    pod: POD,
    container: 'agent',
    clock: ports.clock,
    retryMs: 10,
    onLine: (text) => {
      lines.push(text);
      write(text);
    },
    onTrouble: (error) => troubles.push(error.message),
  });
  const log = (time: string, text: string) => api.writeLog(NAMESPACE, POD, 'agent', time, text);
  log('2026-12-06T04:00:00.100000000Z', 'one');
  log('2026-12-06T04:00:01.100000000Z', 'two');
  log('2026-12-06T04:00:01.100000000Z', 'two again, same nanosecond');
  log('2026-12-06T04:00:01.500000000Z', 'the key is s3cret-capability-value');
  await until(() => lines.length === 4, 'four lines');
  api.dropLogStreams();
  log('2026-12-06T04:00:01.900000000Z', 'five, in the same second');
  log('2026-12-06T04:00:02.000000000Z', 'six');
  await until(() => lines.length === 6, 'six lines');
  log('2026-12-06T04:00:03.000000000Z', 'seven, the last');
  api.endLog(NAMESPACE, POD, 'agent');
  await follower.finish();
  await transcript.flush();
  t.same(lines, [
    'one',
    'two',
    'two again, same nanosecond',
    'the key is s3cret-capability-value',
    'five, in the same second',
    'six',
    'seven, the last',
  ]);
  t.ok(follower.streams() >= 2, 'the stream was opened again');
  const logRequests = api.requests.filter((r) => r.path.endsWith('/log'));
  t.equal(logRequests[0]?.query.sinceTime, undefined, 'the first request reads from the start');
  t.equal(logRequests[1]?.query.sinceTime, '2026-12-06T04:00:01Z', 'the second from the last whole second');
  const written = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { line: string });
  t.same(
    written.map((event) => event.line),
    lines.map((line) => line.replace('s3cret-capability-value', '[redacted]')),
  );
  t.notMatch(readFileSync(file, 'utf8'), /s3cret-capability-value/);
  t.equal(troubles.length, 1, 'the drop was reported once');
});

t.test('stop ends a follow at once (a kill)', async (t) => {
  const { api, jobs, clock } = await setUp(t);
  await jobs.createJob(aTaskJob(attempt));
  api.setPod(NAMESPACE, JOB, POD, { phase: 'Running' });
  const follower = followLog({ jobs, pod: POD, container: 'agent', clock, retryMs: 10, onLine: () => undefined });
  await until(() => api.openLogs() === 1, 'the stream');
  await follower.stop();
  await until(() => api.openLogs() === 0, 'the stream closed');
  t.equal(follower.streams(), 1);
});
