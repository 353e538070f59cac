// Stop and kill send the exact deletes, and a drain's start removes the Jobs and Secrets of dead runs and nothing
// else: checked against the requests the loopback fake API server received from the real client.
import t, { type Test } from 'tap';
import { loadKubeConfig, realKubeJobs } from '../../backends/kubernetes/client/real-jobs.js';
import { deadRunObjects, endAttempt, removeDeadRuns } from '../../backends/kubernetes/jobs/cleanup.js';
import { MANAGED_BY_LABEL, REPO_LABEL, RUN_LABEL } from '../../backends/kubernetes/labels.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { aTaskJob, aTaskSecret, NAMESPACE } from '../helpers/fake-kube-jobs.js';
import { tempDir } from '../helpers/temp.js';

const DEAD = '20261206T030000000001Z-dead01';
const ALIVE = '20261206T040000000001Z-live01';
const JOBS = `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`;
const SECRETS = `/api/v1/namespaces/${NAMESPACE}/secrets`;

async function setUp(t: Test) {
  const api = await startFakeKubeApi(t, tempDir(t));
  const config = loadKubeConfig({ source: 'kubeconfig', file: api.kubeconfig, context: 'fake', namespace: NAMESPACE });
  return { api, jobs: realKubeJobs(config, NAMESPACE) };
}

const deletes = (api: Awaited<ReturnType<typeof startFakeKubeApi>>) =>
  api.requests.filter((r) => r.method === 'DELETE').map((r) => ({ path: r.path, query: r.query, status: r.status }));

t.test('stop deletes the Job with its own grace period, then its Secret', async (t) => {
  const { api, jobs } = await setUp(t);
  const of = { repo: 'widgets', run: ALIVE, task: 'TASK-7', attempt: 1 };
  await jobs.createSecret(aTaskSecret(of));
  await jobs.createJob(aTaskJob(of));
  await endAttempt(jobs, { job: 'ar-task-7-1', secret: 'ar-task-7-1' }, 'stop');
  t.same(deletes(api), [
    { path: `${JOBS}/ar-task-7-1`, query: { propagationPolicy: 'Background' }, status: 200 },
    { path: `${SECRETS}/ar-task-7-1`, query: {}, status: 200 },
  ]);
});

t.test('kill deletes the Job at once (gracePeriodSeconds 0); a Job already gone is fine', async (t) => {
  const { api, jobs } = await setUp(t);
  const of = { repo: 'widgets', run: ALIVE, task: 'TASK-7', attempt: 1 };
  await jobs.createJob(aTaskJob(of));
  await endAttempt(jobs, { job: 'ar-task-7-1', secret: 'ar-task-7-1' }, 'kill');
  t.same(deletes(api), [
    { path: `${JOBS}/ar-task-7-1`, query: { propagationPolicy: 'Background', gracePeriodSeconds: '0' }, status: 200 },
    { path: `${SECRETS}/ar-task-7-1`, query: {}, status: 404 },
  ]);
  await endAttempt(jobs, { job: 'ar-task-7-1' }, 'kill');
  t.equal(deletes(api).at(-1)?.status, 404);
});

t.test('a refused delete is an error that names it', async (t) => {
  const { api, jobs } = await setUp(t);
  api.refuse({ method: 'DELETE', path: /\/jobs\//, status: 403 });
  await t.rejects(endAttempt(jobs, { job: 'ar-task-7-1' }, 'stop'), {
    status: 403,
    message: new RegExp(`DELETE ${JOBS}/ar-task-7-1: 403 Forbidden`),
  });
});

t.test("a drain's start removes dead runs' Jobs and Secrets, and nothing else", async (t) => {
  const { api, jobs } = await setUp(t);
  const dead = { repo: 'widgets', run: DEAD, task: 'TASK-1', attempt: 2 };
  const alive = { repo: 'widgets', run: ALIVE, task: 'TASK-2', attempt: 1 };
  const otherRepo = { repo: 'gadgets', run: DEAD, task: 'TASK-3', attempt: 1 };
  for (const of of [dead, alive, otherRepo]) {
    await jobs.createSecret(aTaskSecret(of));
    await jobs.createJob(aTaskJob(of));
  }
  // Labelled with the repo and a dead run, but not agent-runner's: someone else's object.
  const foreign = aTaskJob(dead, 'someone-elses');
  foreign.metadata!.labels = { [REPO_LABEL]: 'widgets', [RUN_LABEL]: DEAD };
  await jobs.createJob(foreign);
  const before = api.requests.length;

  const removed = await removeDeadRuns(jobs, 'widgets', new Set([ALIVE]));
  t.same(removed, [
    { kind: 'Job', name: 'ar-task-1-2', run: DEAD },
    { kind: 'Secret', name: 'ar-task-1-2', run: DEAD },
  ]);
  t.same(
    api.requests.slice(before).map((r) => `${r.method} ${r.path} ${new URLSearchParams(r.query).toString()}`),
    [
      `GET ${JOBS} labelSelector=${encodeURIComponent(`${MANAGED_BY_LABEL}=agent-runner,${REPO_LABEL}=widgets`)}`,
      `GET ${SECRETS} labelSelector=${encodeURIComponent(`${MANAGED_BY_LABEL}=agent-runner,${REPO_LABEL}=widgets`)}`,
      `DELETE ${JOBS}/ar-task-1-2 gracePeriodSeconds=0&propagationPolicy=Background`,
      `DELETE ${SECRETS}/ar-task-1-2 `,
    ],
  );
  t.same(
    api
      .jobs(NAMESPACE)
      .map((job) => job.metadata.name)
      .sort(),
    ['ar-task-2-1', 'ar-task-3-1', 'someone-elses'],
  );
  t.same(
    api
      .secrets(NAMESPACE)
      .map((secret) => secret.metadata.name)
      .sort(),
    ['ar-task-2-1', 'ar-task-3-1'],
  );
  t.same(await removeDeadRuns(jobs, 'widgets', new Set([ALIVE])), [], 'a second pass finds nothing');
});

t.test('the pure choice: managed-by, repo and a dead run, all three', async (t) => {
  const labels = (extra: Record<string, string>) => ({
    [MANAGED_BY_LABEL]: 'agent-runner',
    [REPO_LABEL]: 'widgets',
    ...extra,
  });
  t.same(
    deadRunObjects(
      [
        { kind: 'Job', metadata: { name: 'a', labels: labels({ [RUN_LABEL]: DEAD }) } },
        { kind: 'Job', metadata: { name: 'b', labels: labels({ [RUN_LABEL]: ALIVE }) } },
        { kind: 'Job', metadata: { name: 'c', labels: labels({}) } },
        { kind: 'Secret', metadata: { name: 'd', labels: { ...labels({ [RUN_LABEL]: DEAD }), [REPO_LABEL]: 'x' } } },
        { kind: 'Secret', metadata: { name: 'e', labels: { [REPO_LABEL]: 'widgets', [RUN_LABEL]: DEAD } } },
        { kind: 'Secret', metadata: { labels: labels({ [RUN_LABEL]: DEAD }) } },
      ],
      'widgets',
      new Set([ALIVE]),
    ),
    [{ kind: 'Job', name: 'a', run: DEAD }],
  );
});
