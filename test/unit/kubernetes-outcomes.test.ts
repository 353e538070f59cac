// The table from a Job's conditions and its pod's status to the attempt's outcome (jobs/verdict.ts):
// each row one fact a cluster reports, as the API server writes it.
import t from 'tap';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { jobOutcome, runOutcomeOf, type JobOutcome } from '../../backends/kubernetes/jobs/verdict.js';

const CREATED = Date.parse('2026-12-06T04:00:00Z');
const BOUND = 300_000;

function aJob(conditions: { type: string; reason?: string; message?: string }[] = []): V1Job {
  return {
    metadata: { name: 'ar-task-7-1', creationTimestamp: new Date(CREATED) },
    spec: { activeDeadlineSeconds: 600, template: { spec: { containers: [] } } },
    status: { conditions: conditions.map((c) => ({ ...c, status: 'True' })) },
  };
}

type PodStatus = NonNullable<V1Pod['status']>;
const aPod = (status: PodStatus): V1Pod => ({ metadata: { name: 'ar-task-7-1-abcde' }, status });
const terminated = (name: string, exitCode: number, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'i',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode, ...extra } },
});
const waiting = (name: string, reason: string, message?: string) => ({
  name,
  image: 'i',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { waiting: { reason, ...(message ? { message } : {}) } },
});
const running = (name: string) => ({
  name,
  image: 'i',
  imageID: '',
  ready: true,
  restartCount: 0,
  state: { running: {} },
});

const rows: [string, V1Job, V1Pod[], number, JobOutcome][] = [
  ['no pod yet, within the bound', aJob(), [], CREATED + 1000, { kind: 'running' }],
  [
    'no pod past the bound',
    aJob(),
    [],
    CREATED + BOUND + 1,
    {
      kind: 'failed',
      jobActive: true,
      reason:
        'Job ar-task-7-1: no pod was created within 300 s; see `kubectl describe job ar-task-7-1` ' +
        '(quota, admission, scheduling or image pull)',
    },
  ],
  [
    'a pod never scheduled past the bound',
    aJob(),
    [
      aPod({
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' },
        ],
      }),
    ],
    CREATED + BOUND + 1,
    {
      kind: 'failed',
      jobActive: true,
      reason:
        'Job ar-task-7-1: its pod was never started (Unschedulable: 0/3 nodes are available) within 300 s; ' +
        'see `kubectl describe job ar-task-7-1` (quota, admission, scheduling or image pull)',
    },
  ],
  [
    'running long past the bound is still running',
    aJob(),
    [
      aPod({
        phase: 'Running',
        initContainerStatuses: [terminated('clone', 0)],
        containerStatuses: [running('agent')],
      }),
    ],
    CREATED + 10 * BOUND,
    { kind: 'running' },
  ],
  ['complete', aJob([{ type: 'Complete' }]), [], CREATED, { kind: 'complete' }],
  ['success criteria met', aJob([{ type: 'SuccessCriteriaMet' }]), [], CREATED, { kind: 'complete' }],
  [
    'deadline exceeded is a stall',
    aJob([{ type: 'Failed', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }]),
    [aPod({ phase: 'Failed', containerStatuses: [terminated('agent', 137, { reason: 'Error' })] })],
    CREATED,
    { kind: 'stalled', reason: 'Job ar-task-7-1 ran past its deadline (activeDeadlineSeconds 600)' },
  ],
  [
    'eviction by the DisruptionTarget condition',
    aJob([{ type: 'Failed', reason: 'PodFailurePolicy', message: 'Pod default/x has condition DisruptionTarget' }]),
    [
      aPod({
        phase: 'Failed',
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
          },
        ],
      }),
    ],
    CREATED,
    { kind: 'evicted', reason: 'Job ar-task-7-1: its pod was evicted (EvictionByEvictionAPI: Eviction API: evicting)' },
  ],
  [
    'eviction by the kubelet (reason Evicted)',
    aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]),
    [aPod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' })],
    CREATED,
    {
      kind: 'evicted',
      reason: 'Job ar-task-7-1: its pod was evicted (Evicted: The node was low on resource: memory.)',
    },
  ],
  [
    'a disrupted pod under podFailurePolicy Ignore: the Job goes on with a new pod',
    aJob(),
    [
      aPod({
        phase: 'Failed',
        conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }],
      }),
      aPod({ phase: 'Running', containerStatuses: [running('agent')] }),
    ],
    CREATED + 10 * BOUND,
    { kind: 'running' },
  ],
  [
    'the agent failed: its exit code and termination message',
    aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }]),
    [
      aPod({
        phase: 'Failed',
        initContainerStatuses: [terminated('clone', 0)],
        containerStatuses: [
          terminated('agent', 3, { reason: 'Error', message: 'task worker: no result\n\u001b[31mred' }),
        ],
      }),
    ],
    CREATED,
    {
      kind: 'failed',
      jobActive: false,
      reason: 'Job ar-task-7-1 failed: the agent container exited 3: Error: task worker: no result red',
      agentExit: { code: 3, message: 'task worker: no result red' },
    },
  ],
  [
    'the clone step failed',
    aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]),
    [
      aPod({
        phase: 'Failed',
        initContainerStatuses: [
          terminated('clone', 128, { reason: 'Error', message: 'fatal: could not read from remote' }),
        ],
        containerStatuses: [waiting('agent', 'PodInitializing')],
      }),
    ],
    CREATED,
    {
      kind: 'failed',
      jobActive: false,
      reason: 'Job ar-task-7-1 failed: the clone step exited 128: Error: fatal: could not read from remote',
    },
  ],
  [
    'killed by a signal (OOM)',
    aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]),
    [aPod({ phase: 'Failed', containerStatuses: [terminated('agent', 137, { reason: 'OOMKilled', signal: 9 })] })],
    CREATED,
    {
      kind: 'failed',
      jobActive: false,
      reason: 'Job ar-task-7-1 failed: the agent container exited 137 (signal 9): OOMKilled',
    },
  ],
  [
    'failed with no pod left: the condition speaks',
    aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }]),
    [],
    CREATED,
    {
      kind: 'failed',
      jobActive: false,
      reason: 'Job ar-task-7-1 failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    },
  ],
  [
    'an image that cannot be pulled, at once',
    aJob(),
    [
      aPod({
        phase: 'Pending',
        containerStatuses: [waiting('agent', 'ImagePullBackOff', 'Back-off pulling image "x@sha256:0"')],
      }),
    ],
    CREATED + 1000,
    {
      kind: 'failed',
      jobActive: true,
      reason:
        'Job ar-task-7-1: the agent container cannot start: ImagePullBackOff: Back-off pulling image "x@sha256:0"; ' +
        'check [repos.NAME.kubernetes] image and that the cluster can pull it',
    },
  ],
  [
    'an init container waiting on its image is just as stuck',
    aJob(),
    [aPod({ phase: 'Pending', initContainerStatuses: [waiting('clone', 'ErrImagePull')] })],
    CREATED + 1000,
    {
      kind: 'failed',
      jobActive: true,
      reason:
        'Job ar-task-7-1: the clone container cannot start: ErrImagePull; ' +
        'check [repos.NAME.kubernetes] image and that the cluster can pull it',
    },
  ],
  [
    'a container still creating is not a failure',
    aJob(),
    [aPod({ phase: 'Pending', containerStatuses: [waiting('agent', 'ContainerCreating')] })],
    CREATED + 1000,
    { kind: 'running' },
  ],
];

for (const [name, job, pods, now, expected] of rows)
  t.test(name, async (t) => {
    t.same(jobOutcome({ job, pods, now, podlessBoundMs: BOUND }), expected);
  });

t.test('a long termination message is cut to one bounded line', async (t) => {
  const job = aJob([{ type: 'Failed', reason: 'BackoffLimitExceeded' }]);
  const pod = aPod({ phase: 'Failed', containerStatuses: [terminated('agent', 1, { message: 'x'.repeat(5000) })] });
  const outcome = jobOutcome({ job, pods: [pod], now: CREATED, podlessBoundMs: BOUND });
  t.equal(outcome.kind, 'failed');
  if (outcome.kind === 'failed')
    t.equal(outcome.reason, `Job ar-task-7-1 failed: the agent container exited 1: ${'x'.repeat(300)}...`);
});

t.test('a creation time as the watch sends it (a string) reads the same as the list (a Date)', async (t) => {
  const job = aJob();
  (job.metadata as { creationTimestamp: unknown }).creationTimestamp = '2026-12-06T04:00:00Z';
  t.equal(jobOutcome({ job, pods: [], now: CREATED + BOUND + 1, podlessBoundMs: BOUND }).kind, 'failed');
  t.equal(jobOutcome({ job, pods: [], now: CREATED + BOUND - 1, podlessBoundMs: BOUND }).kind, 'running');
});

t.test('the run loop outcomes the drain already knows', async (t) => {
  t.same(runOutcomeOf({ kind: 'stalled', reason: 'r' }), { kind: 'stalled', reason: 'r' });
  t.same(runOutcomeOf({ kind: 'failed', reason: 'r', jobActive: false }), { kind: 'agent-failed', reason: 'r' });
});
