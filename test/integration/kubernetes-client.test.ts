// The real @kubernetes/client-node behind the KubeJobs port, against the loopback fake API server: every call reaches
// the REST path the API server serves, with the query the runner means (labelSelector, watch, resourceVersion,
// bookmarks, follow, timestamps, propagationPolicy, gracePeriodSeconds), and every refusal is a KubeRequestError
// that names the request, the Status reason and message, and the fix.
import t, { type Test } from 'tap';
import { realKubeJobs, loadKubeConfig } from '../../backends/kubernetes/client/real-jobs.js';
import { KubeRequestError, type KubeJobs, type WatchEvent } from '../../backends/kubernetes/port.js';
import { repoSelector } from '../../backends/kubernetes/labels.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { aTaskJob, aTaskSecret, NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { tempDir } from '../helpers/temp.js';

const attempt = { repo: 'widgets', run: '20261206T040000000001Z-abc123', task: 'TASK-7', attempt: 1 };

async function connect(t: Test) {
  const api = await startFakeKubeApi(t, tempDir(t));
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  return { api, jobs: realKubeJobs(config, NAMESPACE) };
}

async function refusal(promise: Promise<unknown>): Promise<KubeRequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof KubeRequestError) return error;
    throw error;
  }
  throw new Error('expected a KubeRequestError');
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

t.test('create, list and delete reach the API server as the runner means them', async (t) => {
  const { api, jobs } = await connect(t);
  await jobs.createSecret(aTaskSecret(attempt));
  const created = await jobs.createJob(aTaskJob(attempt));
  t.equal(created.metadata?.name, 'ar-task-7-1');
  t.equal(created.metadata?.labels?.['agent-runner/task'], 'TASK-7');
  const listed = await jobs.listJobs(repoSelector('widgets'));
  t.same(
    listed.items.map((job) => job.metadata?.name),
    ['ar-task-7-1'],
  );
  t.match(listed.resourceVersion, /^\d+$/);
  t.same(await jobs.listJobs(repoSelector('other')).then((l) => l.items), []);
  t.equal((await jobs.listSecrets(repoSelector('widgets'))).items.length, 1);

  await jobs.deleteJob('ar-task-7-1', {});
  await jobs.deleteSecret('ar-task-7-1');
  const deletes = api.requests.filter((r) => r.method === 'DELETE');
  t.same(
    deletes.map((r) => [r.path, r.query]),
    [
      [`/apis/batch/v1/namespaces/${NAMESPACE}/jobs/ar-task-7-1`, { propagationPolicy: 'Background' }],
      [`/api/v1/namespaces/${NAMESPACE}/secrets/ar-task-7-1`, {}],
    ],
  );
  t.same(api.jobs(NAMESPACE), []);
  t.same(api.secrets(NAMESPACE), []);
  t.same(api.problems, []);
});

t.test('a kill deletes with gracePeriodSeconds 0', async (t) => {
  const { api, jobs } = await connect(t);
  await jobs.createJob(aTaskJob(attempt));
  await jobs.deleteJob('ar-task-7-1', { gracePeriodSeconds: 0 });
  t.same(api.requests.find((r) => r.method === 'DELETE')?.query, {
    propagationPolicy: 'Background',
    gracePeriodSeconds: '0',
  });
});

t.test('a watch delivers events after the resourceVersion, bookmarks, and the 410 of a compacted one', async (t) => {
  const { api, jobs } = await connect(t);
  const start = (await jobs.listJobs(repoSelector('widgets'))).resourceVersion;
  const events: WatchEvent[] = [];
  const stream = await jobs.watchJobs(repoSelector('widgets'), start, (event) => events.push(event));
  await jobs.createJob(aTaskJob(attempt));
  api.setJobStatus(NAMESPACE, 'ar-task-7-1', { active: 1 });
  api.bookmark();
  await until(() => events.length === 3, 'three events');
  t.same(
    events.map((e) => e.type),
    ['ADDED', 'MODIFIED', 'BOOKMARK'],
  );
  const watchRequest = api.requests.find((r) => r.query.watch === 'true');
  t.same(watchRequest?.query, {
    watch: 'true',
    labelSelector: repoSelector('widgets'),
    resourceVersion: start,
    allowWatchBookmarks: 'true',
  });
  api.closeWatches();
  t.same(await stream.ended, {}, 'a close by the server ends the stream without an error');

  api.compact();
  const late: WatchEvent[] = [];
  const old = await jobs.watchJobs(repoSelector('widgets'), start, (event) => late.push(event));
  await old.ended;
  t.equal(late.length, 1);
  const [gone] = late;
  t.equal(gone?.type, 'ERROR');
  if (gone?.type === 'ERROR')
    t.match(gone.status, { code: 410, reason: 'Expired', message: /too old resource version/ });
});

t.test('a log is followed with timestamps from sinceTime, and ends with the container', async (t) => {
  const { api, jobs } = await connect(t);
  await jobs.createJob(aTaskJob(attempt));
  api.setPod(NAMESPACE, 'ar-task-7-1', 'ar-task-7-1-x1', { phase: 'Running' });
  api.writeLog(NAMESPACE, 'ar-task-7-1-x1', 'agent', '2026-12-06T04:00:00.100000000Z', 'first');
  api.writeLog(NAMESPACE, 'ar-task-7-1-x1', 'agent', '2026-12-06T04:00:01.200000000Z', 'second');
  let text = '';
  const stream = await jobs.followLog(
    { pod: 'ar-task-7-1-x1', container: 'agent', sinceTime: '2026-12-06T04:00:01Z' },
    (chunk) => (text += chunk),
  );
  await until(() => text.includes('second'), 'the second line');
  api.writeLog(NAMESPACE, 'ar-task-7-1-x1', 'agent', '2026-12-06T04:00:02.300000000Z', 'third');
  api.endLog(NAMESPACE, 'ar-task-7-1-x1', 'agent');
  await stream.ended;
  t.equal(text, '2026-12-06T04:00:01.200000000Z second\n2026-12-06T04:00:02.300000000Z third\n');
  t.match(api.requests.find((r) => r.path.endsWith('/log'))?.query, {
    container: 'agent',
    follow: 'true',
    timestamps: 'true',
    sinceTime: '2026-12-06T04:00:01Z',
  });
});

t.test('refusals name the request, the Status and the fix', async (t) => {
  const { api, jobs } = await connect(t);
  const path = `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`;

  api.refuse({ method: 'POST', path: /\/jobs$/, status: 403 });
  const forbidden = await refusal(jobs.createJob(aTaskJob(attempt)));
  t.equal(forbidden.status, 403);
  t.equal(forbidden.reason, 'Forbidden');
  t.match(forbidden.message, `POST ${path}: 403 Forbidden: jobs.batch "ar-task-7-1" is forbidden`);
  t.match(forbidden.message, /grant the runner's account the RBAC in docs\/operations.md/);

  await jobs.createJob(aTaskJob(attempt));
  const exists = await refusal(jobs.createJob(aTaskJob(attempt)));
  t.equal(exists.status, 409);
  t.match(exists.message, /409 AlreadyExists: jobs.batch "ar-task-7-1" already exists; an object of that name/);

  const invalid = aTaskJob({ ...attempt, attempt: 2 });
  (invalid.spec as { backoffLimit: unknown }).backoffLimit = 'none';
  const refused = await refusal(jobs.createJob(invalid));
  t.equal(refused.status, 422);
  t.match(refused.message, /422 Invalid: Job.batch "ar-task-7-2" is invalid: .*backoffLimit/);
  t.equal(api.problems.length, 1, 'the schema problem was recorded');

  const missing = await refusal(jobs.deleteJob('nope', {}));
  t.equal(missing.status, 404);
  t.match(missing.message, `DELETE ${path}/nope: 404 NotFound: jobs.batch "nope" not found`);

  const noLog = await refusal(jobs.followLog({ pod: 'gone', container: 'agent' }, () => undefined));
  t.equal(noLog.status, 404);
});

t.test('a wrong token is a 401 that says to renew the credentials', async (t) => {
  const api = await startFakeKubeApi(t, tempDir(t));
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, namespace: NAMESPACE });
  const user = config.getCurrentUser();
  if (user) (user as { token?: string }).token = 'wrong';
  const jobs: KubeJobs = realKubeJobs(config, NAMESPACE);
  const error = await refusal(jobs.listJobs(repoSelector('widgets')));
  t.equal(error.status, 401);
  t.match(error.message, /renew the kubeconfig's user/);
});

t.test('an unknown context names the file, the contexts it has and the key to set', async (t) => {
  const api = await startFakeKubeApi(t, tempDir(t));
  t.throws(() => loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'prod', namespace: 'x' }), {
    message: `${api.kubeconfig}: no context "prod" (it has fake): set [repos.NAME.kubernetes] context to one of them`,
  });
});
