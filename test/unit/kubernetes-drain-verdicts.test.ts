// The drain's Kubernetes verdicts: a Job's end as the worker's outcome (an eviction run again up to the bound), a
// pod's log line as a transcript event, and the cluster's refusal stopping the drain uncharged.
import t from 'tap';
import { afterJob, podLineEvent } from '../../backends/kubernetes/drain/index.js';
import { afterAgent } from '../../src/drain/verdict/index.js';

t.test('a Job end: complete takes the result; stall, failure, stop end; eviction again up to the bound', async (t) => {
  const cases: [Parameters<typeof afterJob>[0], number, ReturnType<typeof afterJob>][] = [
    [{ kind: 'complete' }, 0, { kind: 'take-result' }],
    [
      { kind: 'stalled', reason: 'Job j ran past its deadline' },
      0,
      { kind: 'ended', outcome: { kind: 'stalled', reason: 'Job j ran past its deadline' } },
    ],
    [
      { kind: 'failed', reason: 'Job j failed: the agent container exited 3', jobActive: false },
      0,
      { kind: 'ended', outcome: { kind: 'agent-failed', reason: 'Job j failed: the agent container exited 3' } },
    ],
    [
      {
        kind: 'failed',
        reason: 'Job j failed: the agent container exited 6: Error: blocked: needs a database',
        jobActive: false,
        agentExit: { code: 6, message: 'blocked: needs a database' },
      },
      0,
      { kind: 'ended', outcome: { kind: 'blocked', reason: 'needs a database' } },
    ],
    [
      {
        kind: 'failed',
        reason: 'Job j failed: the agent container exited 4: Error: setupFailed: setup make failed (exit 2)',
        jobActive: false,
        agentExit: { code: 4, message: 'setupFailed: setup make failed (exit 2)' },
      },
      0,
      { kind: 'ended', outcome: { kind: 'setup-failed', reason: 'setup make failed (exit 2)' } },
    ],
    [
      {
        kind: 'failed',
        reason: 'Job j failed: the agent container exited 5: Error: agentFailed: exit 3',
        jobActive: false,
        agentExit: { code: 5, message: 'agentFailed: exit 3' },
      },
      0,
      {
        kind: 'ended',
        outcome: {
          kind: 'agent-failed',
          reason: 'Job j failed: the agent container exited 5: Error: agentFailed: exit 3',
        },
      },
    ],
    [
      { kind: 'evicted', reason: 'Job j: its pod was evicted' },
      0,
      { kind: 'again', reason: 'Job j: its pod was evicted' },
    ],
    [
      { kind: 'evicted', reason: 'Job j: its pod was evicted' },
      2,
      { kind: 'again', reason: 'Job j: its pod was evicted' },
    ],
    [
      { kind: 'evicted', reason: 'Job j: its pod was evicted' },
      3,
      {
        kind: 'ended',
        outcome: {
          kind: 'agent-failed',
          reason: 'evicted 4 times in a row (the cluster keeps taking its pod away); last: Job j: its pod was evicted',
        },
      },
    ],
    [
      { kind: 'stopped', how: 'kill' },
      0,
      { kind: 'ended', outcome: { kind: 'unfinished', reason: 'the drain killed its Job' } },
    ],
  ];
  for (const [end, evictions, expected] of cases)
    t.same(afterJob(end, evictions, 3), expected, `${end.kind} after ${evictions} eviction(s)`);
});

t.test("a pod's line: a known event as itself with the runtime's time; anything else an output line", async (t) => {
  const at = BigInt(Date.parse('2026-12-06T04:00:01.250Z')) * 1_000_000n + 123n;
  t.same(podLineEvent('{"event":"session-end","exit":0,"time":"1999-01-01T00:00:00Z"}', at, 'job-1'), {
    event: 'session-end',
    exit: 0,
    time: '2026-12-06T04:00:01.250Z',
    job: 'job-1',
  });
  const plain = (line: string) => ({
    event: 'output',
    stream: 'pod',
    job: 'job-1',
    line,
    time: '2026-12-06T04:00:01.250Z',
  });
  for (const line of [
    'plain words',
    '{"event":"ledger-entry","cost":0}',
    '{"type":"assistant"}',
    '["event"]',
    '{"event":',
    `{"event":"output","line":"${'x'.repeat(70_000)}"}`,
  ])
    t.same(podLineEvent(line, at, 'job-1'), plain(line), line.slice(0, 40));
});

t.test('the cluster refusing an attempt stops the drain and charges nothing', async (t) => {
  const verdict = afterAgent({
    outcome: { kind: 'cluster-refused', reason: 'POST /apis/batch/v1/namespaces/a/jobs: 403 Forbidden: ...' },
    failure: undefined,
    stopped: false,
    attempts: { failures: 1, lastReason: 'x', conflictRetried: false },
    maxAttempts: 2,
  });
  t.same(verdict, { kind: 'systemic', reason: 'POST /apis/batch/v1/namespaces/a/jobs: 403 Forbidden: ...' });
});
