// The drain's verdicts, table by table: after the agent, after integration
// (fresh and recovered), the merged tree, the plan each verdict applies, a
// leftover branch, and the drain's outcome. Inputs are builder fakes.
import t from 'tap';
import { afterAgent, afterInternalError, isSystemic, SYSTEMIC_FAILURES } from '../../src/drain/verdict/after-agent.js';
import {
  afterIntegration,
  afterRecoveredIntegration,
  conflictOutcome,
  gateFailureReason,
  judgeMergedTree,
} from '../../src/drain/verdict/after-integration.js';
import { planFor, type TaskPlan, type TaskVerdict } from '../../src/drain/verdict/task.js';
import { judgeLeftover, strayWorktreeFolders, type LeftoverFacts } from '../../src/drain/verdict/leftover.js';
import { drainOutcome, shouldPublish, type DrainFacts } from '../../src/drain/verdict/outcome.js';
import { aTask } from '../helpers/board-builder.js';
import { aGate, agentFailed, anAgentEnd, attemptsSoFar, integration } from '../helpers/verdict-builders.js';

t.test('afterAgent: the board and the typed failure decide, never the words of a reason', async (t) => {
  const rows: [string, Parameters<typeof afterAgent>[0], ReturnType<typeof afterAgent>][] = [
    ['Done goes to the integrator', anAgentEnd(), { kind: 'integrate' }],
    ['Done is Done even when the drain was stopped', anAgentEnd({ stopped: true }), { kind: 'integrate' }],
    [
      'Blocked is committed',
      anAgentEnd({ outcome: { kind: 'blocked', reason: 'needs a key' } }),
      { kind: 'block', reason: 'needs a key' },
    ],
    [
      'Blocked is committed even when stopped',
      anAgentEnd({ outcome: { kind: 'blocked', reason: 'needs a key' }, stopped: true }),
      { kind: 'block', reason: 'needs a key' },
    ],
    [
      'not logged in stops the drain',
      anAgentEnd(agentFailed('not-logged-in', 'Not logged in')),
      { kind: 'systemic', reason: 'not-logged-in: Not logged in' },
    ],
    [
      'rate limited stops the drain',
      anAgentEnd(agentFailed('rate-limited', 'resets 7pm')),
      { kind: 'systemic', reason: 'rate-limited: resets 7pm' },
    ],
    [
      'a stop wins over a systemic failure',
      anAgentEnd({ ...agentFailed('rate-limited', 'resets 7pm'), stopped: true }),
      { kind: 'interrupted', reason: 'the drain was stopped' },
    ],
    [
      'a stop counts no attempt',
      anAgentEnd({ ...agentFailed('crashed', 'exit 3'), stopped: true, attempts: attemptsSoFar(5) }),
      { kind: 'interrupted', reason: 'the drain was stopped' },
    ],
    [
      'a prose reason that looks systemic is not: the failure is typed',
      anAgentEnd({ outcome: { kind: 'agent-failed', reason: 'rate-limited: said the agent' }, failure: 'agent-error' }),
      {
        kind: 'fail',
        reason: 'rate-limited: said the agent (attempt 1 of 2)',
        failedAttempt: 'rate-limited: said the agent',
      },
    ],
    [
      'an agent failure without a type is an attempt',
      anAgentEnd({ outcome: { kind: 'agent-failed', reason: 'not-logged-in' }, failure: undefined }),
      { kind: 'fail', reason: 'not-logged-in (attempt 1 of 2)', failedAttempt: 'not-logged-in' },
    ],
    [
      'over its budget parks, and is no attempt even at the last one',
      anAgentEnd({
        outcome: { kind: 'over-budget', reason: 'over its budget: $2.10 of $2.00 (task_usd)' },
        attempts: attemptsSoFar(1),
      }),
      { kind: 'park', reason: 'over its budget: $2.10 of $2.00 (task_usd)' },
    ],
    [
      'a session the agent stopped at its budget parks without an attempt (typed, not read from the words)',
      anAgentEnd(
        agentFailed('over-budget', 'stopped at its budget: Reached maximum budget ($0.5) (error_max_budget_usd)'),
      ),
      {
        kind: 'park',
        reason:
          'over its budget (over-budget: stopped at its budget: Reached maximum budget ($0.5) (error_max_budget_usd))',
      },
    ],
    [
      'a prose reason that mentions the budget is an ordinary failure',
      anAgentEnd({ outcome: { kind: 'agent-failed', reason: 'over-budget: said the agent' }, failure: 'agent-error' }),
      {
        kind: 'fail',
        reason: 'over-budget: said the agent (attempt 1 of 2)',
        failedAttempt: 'over-budget: said the agent',
      },
    ],
    [
      'a first crash is attempt 1',
      anAgentEnd(agentFailed('crashed', 'exit 3')),
      { kind: 'fail', reason: 'crashed: exit 3 (attempt 1 of 2)', failedAttempt: 'crashed: exit 3' },
    ],
    [
      'the last allowed attempt parks',
      anAgentEnd({ ...agentFailed('crashed', 'exit 3'), attempts: attemptsSoFar(1) }),
      { kind: 'park', reason: 'failed 2 time(s); last: crashed: exit 3', failedAttempt: 'crashed: exit 3' },
    ],
    [
      'beyond maxAttempts (it was lowered) parks too',
      anAgentEnd({ ...agentFailed('idle-timeout', 'no output for 600s'), attempts: attemptsSoFar(4), maxAttempts: 3 }),
      {
        kind: 'park',
        reason: 'failed 5 time(s); last: idle-timeout: no output for 600s',
        failedAttempt: 'idle-timeout: no output for 600s',
      },
    ],
    [
      'a conflict retry is not a failure',
      anAgentEnd({ ...agentFailed('crashed', 'exit 3'), attempts: attemptsSoFar(0, true) }),
      { kind: 'fail', reason: 'crashed: exit 3 (attempt 1 of 2)', failedAttempt: 'crashed: exit 3' },
    ],
    [
      'stalled is an attempt',
      anAgentEnd({ outcome: { kind: 'stalled', reason: 'stalled: the session changed nothing' } }),
      {
        kind: 'fail',
        reason: 'stalled: the session changed nothing (attempt 1 of 2)',
        failedAttempt: 'stalled: the session changed nothing',
      },
    ],
    [
      'a failed setup is an attempt',
      anAgentEnd({ outcome: { kind: 'setup-failed', reason: 'setup ./s failed (exit 1): x' } }),
      {
        kind: 'fail',
        reason: 'setup ./s failed (exit 1): x (attempt 1 of 2)',
        failedAttempt: 'setup ./s failed (exit 1): x',
      },
    ],
    [
      'unfinished with maxAttempts 1 parks at once',
      anAgentEnd({ outcome: { kind: 'unfinished', reason: 'not Done' }, maxAttempts: 1 }),
      { kind: 'park', reason: 'failed 1 time(s); last: not Done', failedAttempt: 'not Done' },
    ],
    [
      'an unreadable status is an attempt',
      anAgentEnd({
        outcome: { kind: 'unreadable', reason: 'task status unreadable after the session: x.md: bad YAML' },
      }),
      {
        kind: 'fail',
        reason: 'task status unreadable after the session: x.md: bad YAML (attempt 1 of 2)',
        failedAttempt: 'task status unreadable after the session: x.md: bad YAML',
      },
    ],
  ];
  for (const [name, facts, expected] of rows) t.same(afterAgent(facts), expected, name);
  t.same([...SYSTEMIC_FAILURES].sort(), ['not-logged-in', 'rate-limited']);
  t.equal(isSystemic({ kind: 'stalled', reason: 'x' }, 'rate-limited'), false, 'only an agent failure can be systemic');
  t.same(afterInternalError(new Error('disk full')), { kind: 'internal-error', reason: 'internal error: disk full' });
  t.same(afterInternalError('odd'), { kind: 'internal-error', reason: 'internal error: odd' });
});

t.test('afterIntegration: land, retry a first conflict, park the rest', async (t) => {
  const rows: [string, ReturnType<typeof integration.landed>, boolean, ReturnType<typeof afterIntegration>][] = [
    ['landed', integration.landed('abc'), false, { kind: 'land', commit: 'abc' }],
    ['already landed', integration.alreadyLanded('abc'), false, { kind: 'land', commit: 'abc' }],
    [
      'protected paths park',
      integration.protectedPaths('changes .agent/ (x)'),
      false,
      { kind: 'park', reason: 'changes .agent/ (x)' },
    ],
    [
      'a first conflict retries',
      integration.conflict('VERSION', 'a.txt'),
      false,
      {
        kind: 'retry',
        reason: 'merge conflict in VERSION, a.txt',
        tellAgent: 'merge conflict in VERSION, a.txt; another task changed the same lines and landed first',
      },
    ],
    [
      'a second conflict parks',
      integration.conflict('VERSION'),
      true,
      { kind: 'park', reason: 'merge conflict in VERSION' },
    ],
    [
      'a red gate parks with its last three lines',
      integration.red({ tail: 'one\ntwo\n\nthree\nfour\n' }),
      false,
      { kind: 'park', reason: 'gate failed: gates exited 1: two | three | four' },
    ],
    [
      'a red gate without output',
      integration.red({ detail: 'gates timed out (wall-clock)', tail: '' }),
      false,
      { kind: 'park', reason: 'gate failed: gates timed out (wall-clock)' },
    ],
  ];
  for (const [name, outcome, retried, expected] of rows) t.same(afterIntegration(outcome, retried), expected, name);
  t.equal(
    gateFailureReason(aGate({ ok: false, detail: 'gates exited 2', tail: 'boom' })),
    'gate failed: gates exited 2: boom',
  );
});

t.test('afterRecoveredIntegration: recovered work lands, parks for a human, or runs again', async (t) => {
  const recovered = 'recovered: integrated the finished work of an interrupted drain';
  const rows: [string, ReturnType<typeof integration.landed>, ReturnType<typeof afterRecoveredIntegration>][] = [
    ['landed', integration.landed('abc'), { kind: 'land', commit: 'abc', reason: recovered }],
    [
      'found on auto/work already',
      integration.alreadyLanded('abc'),
      { kind: 'land', commit: 'abc', reason: recovered },
    ],
    [
      'protected paths park; the worktree goes, the branch stays',
      integration.protectedPaths('why'),
      { kind: 'park', reason: 'why', recovered: true },
    ],
    [
      'a conflict runs again',
      integration.conflict('a'),
      {
        kind: 'run-again',
        detail: 'TASK-1: finished work from an interrupted drain no longer integrates (conflict); it will run again',
      },
    ],
    [
      'a red gate runs again',
      integration.red(),
      {
        kind: 'run-again',
        detail: 'TASK-1: finished work from an interrupted drain no longer integrates (gate-failed); it will run again',
      },
    ],
  ];
  for (const [name, outcome, expected] of rows) t.same(afterRecoveredIntegration('TASK-1', outcome), expected, name);
});

t.test('judgeMergedTree and conflictOutcome: what the integrator commits', async (t) => {
  const green = aGate();
  const red = aGate({ ok: false, detail: 'gates exited 1', tail: 'x' });
  const rows: [string, readonly string[], Parameters<typeof judgeMergedTree>[1], ReturnType<typeof judgeMergedTree>][] =
    [
      ['green and HEAD unmoved: commit', [], { result: green, headMoved: false }, { kind: 'commit', gate: green }],
      ['red: reject with the gate as it ran', [], { result: red, headMoved: false }, { kind: 'reject', gate: red }],
      [
        'a gate that commits is red',
        [],
        { result: green, headMoved: true },
        {
          kind: 'reject',
          gate: { ...green, ok: false, detail: 'the gates script moved HEAD (gates must not commit)' },
        },
      ],
      [
        'drift: rejected, the gate never ran',
        ['.agent/gates.sh', '.agent/config.json'],
        undefined,
        {
          kind: 'reject',
          gate: {
            ok: false,
            detail:
              'after the merge, .agent/gates.sh, .agent/config.json differ from auto/work before it; the gate was not run',
            tail: '',
            durationMs: 0,
          },
        },
      ],
    ];
  for (const [name, drift, gate, expected] of rows) t.same(judgeMergedTree(drift, gate), expected, name);
  t.same(conflictOutcome(['a', 'b'], 'ignored'), { kind: 'conflict', files: ['a', 'b'] });
  t.same(conflictOutcome([], 'warning\nfatal: refusing to merge unrelated histories\n'), {
    kind: 'conflict',
    files: ['(merge failed: fatal: refusing to merge unrelated histories)'],
  });
});

t.test('planFor: every verdict ends through the same steps', async (t) => {
  const rows: [TaskVerdict, TaskPlan][] = [
    [
      { kind: 'land', commit: 'c' },
      { attempts: 'settle', worktree: 'remove', exclude: false, report: { finish: 'landed', commit: 'c' } },
    ],
    [
      { kind: 'land', commit: 'c', reason: 'recovered' },
      {
        attempts: 'settle',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'landed', commit: 'c', reason: 'recovered' },
      },
    ],
    [
      { kind: 'park', reason: 'r' },
      {
        stagingEdit: { kind: 'park', reason: 'r' },
        attempts: 'settle',
        worktree: 'keep',
        exclude: false,
        report: { finish: 'parked', reason: 'r' },
      },
    ],
    [
      { kind: 'park', reason: 'failed 2 time(s); last: x', failedAttempt: 'x' },
      {
        countFailure: { reason: 'x', bestEffort: false },
        stagingEdit: { kind: 'park', reason: 'failed 2 time(s); last: x' },
        attempts: 'settle',
        worktree: 'keep',
        exclude: false,
        report: { finish: 'parked', reason: 'failed 2 time(s); last: x' },
      },
    ],
    [
      { kind: 'park', reason: 'r', recovered: true },
      {
        stagingEdit: { kind: 'park', reason: 'r' },
        attempts: 'settle',
        worktree: 'remove-keep-branch',
        exclude: false,
        report: { finish: 'parked', reason: 'r' },
      },
    ],
    [
      { kind: 'block', reason: 'needs a key' },
      {
        stagingEdit: { kind: 'block', reason: 'needs a key' },
        attempts: 'settle',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'blocked', reason: 'needs a key' },
      },
    ],
    [
      { kind: 'retry', reason: 'r', tellAgent: 'tell' },
      {
        attempts: { conflictRetry: 'r', tellAgent: 'tell' },
        worktree: 'remove',
        exclude: false,
        report: { retrying: 'r' },
      },
    ],
    [
      { kind: 'fail', reason: 'x (attempt 1 of 2)', failedAttempt: 'x' },
      {
        countFailure: { reason: 'x', bestEffort: false },
        attempts: 'keep',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'failed', reason: 'x (attempt 1 of 2)' },
      },
    ],
    [
      { kind: 'systemic', reason: 'not-logged-in: no' },
      {
        systemic: 'TASK-1: not-logged-in: no',
        attempts: 'keep',
        worktree: 'remove',
        exclude: true,
        report: { finish: 'failed', reason: 'not-logged-in: no' },
      },
    ],
    [
      { kind: 'interrupted', reason: 'the drain was stopped' },
      {
        attempts: 'keep',
        worktree: 'remove',
        exclude: false,
        report: { finish: 'interrupted', reason: 'the drain was stopped' },
      },
    ],
    [
      { kind: 'internal-error', reason: 'internal error: x' },
      {
        countFailure: { reason: 'internal error: x', bestEffort: true },
        attempts: 'keep',
        worktree: 'keep',
        exclude: true,
        report: { finish: 'failed', reason: 'internal error: x' },
      },
    ],
    [
      { kind: 'run-again', detail: 'd' },
      { attempts: 'keep', worktree: 'remove', exclude: false, report: { recovered: 'd' } },
    ],
  ];
  for (const [verdict, plan] of rows) t.same(planFor('TASK-1', verdict), plan, verdict.kind);
});

t.test('judgeLeftover: what a branch an interrupted drain left is', async (t) => {
  const todo = aTask({ id: 'TASK-3', status: 'To Do' });
  const parked = aTask({ id: 'TASK-3', labels: ['parked'] });
  const done = aTask({ id: 'TASK-3', status: 'Done' });
  const leftover = (fields: Partial<LeftoverFacts>): LeftoverFacts => ({
    branch: 'auto/TASK-3',
    task: todo,
    onStaging: 'not-landed',
    stagingReset: false,
    statusOnBranch: 'In Progress',
    ...fields,
  });
  const rows: [string, LeftoverFacts, ReturnType<typeof judgeLeftover>][] = [
    [
      'a parked task keeps its branch',
      leftover({ task: parked, onStaging: 'landed', statusOnBranch: 'Done' }),
      { kind: 'keep-parked' },
    ],
    [
      'landed work is tidied',
      leftover({ onStaging: 'landed', statusOnBranch: 'Done' }),
      { kind: 'tidy-landed', note: 'auto/TASK-3: already landed; removed the branch' },
    ],
    [
      'landed even when its task is gone',
      leftover({ task: undefined, onStaging: 'landed' }),
      { kind: 'tidy-landed', note: 'auto/TASK-3: already landed; removed the branch' },
    ],
    [
      'a branch with no commits is not "landed": it is empty',
      leftover({ onStaging: 'empty' }),
      {
        kind: 'drop',
        note: 'auto/TASK-3: no commits of its own, nothing to land; removed the branch; TASK-3 runs again',
      },
    ],
    [
      'an empty branch of a task Done on auto/work',
      leftover({ task: done, onStaging: 'empty' }),
      {
        kind: 'drop',
        note: 'auto/TASK-3: no commits of its own, nothing to land; removed the branch; TASK-3 is Done on auto/work',
      },
    ],
    [
      'Done on the branch is integrated',
      leftover({ statusOnBranch: 'Done' }),
      { kind: 'integrate', task: todo, note: 'auto/TASK-3: finished by an interrupted drain; integrating it now' },
    ],
    [
      'after a reset, finished work is not integrated: it grew from what the reset discarded',
      leftover({ statusOnBranch: 'Done', stagingReset: true }),
      {
        kind: 'drop',
        note: 'auto/TASK-3: grew from auto/work as it was before this drain reset it to the base; removed the branch; TASK-3 runs again',
      },
    ],
    [
      'after a reset, a parked branch goes too (its task is To Do again on the reset board)',
      leftover({ task: parked, statusOnBranch: 'Done', stagingReset: true }),
      {
        kind: 'drop',
        note: 'auto/TASK-3: grew from auto/work as it was before this drain reset it to the base; removed the branch; TASK-3 runs again',
      },
    ],
    [
      'unfinished work is dropped',
      leftover({}),
      { kind: 'drop', note: 'auto/TASK-3: unfinished work of an interrupted drain removed; TASK-3 runs again' },
    ],
    [
      'an unreadable status on the branch is unfinished',
      leftover({ statusOnBranch: undefined }),
      { kind: 'drop', note: 'auto/TASK-3: unfinished work of an interrupted drain removed; TASK-3 runs again' },
    ],
    [
      'a branch without a task is dropped',
      leftover({ task: undefined, statusOnBranch: 'Done' }),
      { kind: 'drop', note: 'auto/TASK-3: unfinished work of an interrupted drain removed; no such task on auto/work' },
    ],
  ];
  for (const [name, facts, expected] of rows) t.same(judgeLeftover(facts), expected, name);
  t.same(
    strayWorktreeFolders(['staging', 'TASK-1', 'TASK-2', '.tmp'], new Set(['staging', 'TASK-2'])),
    ['TASK-1'],
    'kept and dot folders stay',
  );
});

t.test('drainOutcome: what the drain says it did', async (t) => {
  const facts = (fields: Partial<DrainFacts>): DrainFacts => ({
    systemicFailure: undefined,
    stopped: false,
    tasksEnded: 2,
    ...fields,
  });
  const systemic = 'stopped: the agent cannot work (TASK-1: not-logged-in: no); fix it and run again';
  const rows: [string, DrainFacts, ReturnType<typeof drainOutcome>][] = [
    ['tasks ended: drained', facts({}), { outcome: 'drained' }],
    ['nothing ran: nothing to do', facts({ tasksEnded: 0 }), { outcome: 'nothing-to-do' }],
    ['--task ran', facts({ only: { id: 'TASK-3', ran: true, onBoard: true }, tasksEnded: 1 }), { outcome: 'drained' }],
    [
      '--task not ready',
      facts({ only: { id: 'TASK-3', ran: false, onBoard: true }, tasksEnded: 0 }),
      {
        outcome: 'failed',
        failure: 'TASK-3 is not ready on auto/work; `agent-runner next` (which reads auto/work) says why',
      },
    ],
    [
      '--task not ready for another reason: as before, with its reasons',
      facts({
        only: {
          id: 'TASK-3',
          ran: false,
          onBoard: true,
          standing: { kind: 'not-ready', reasons: ['blocked by TASK-2 (To Do)', 'label "effort:" ...'] },
        },
        tasksEnded: 0,
      }),
      {
        outcome: 'failed',
        failure:
          'TASK-3 is not ready on auto/work (blocked by TASK-2 (To Do); label "effort:" ...); `agent-runner next` (which reads auto/work) says why',
      },
    ],
    [
      '--task already landed: met, with the commit and the run',
      facts({
        only: {
          id: 'TASK-3',
          ran: false,
          onBoard: true,
          standing: { kind: 'landed', commit: 'abcdef0123456789abcdef0123456789abcdef01', runId: 'R7' },
        },
        tasksEnded: 0,
      }),
      { outcome: 'nothing-to-do', note: 'TASK-3 already landed in abcdef012345 by run R7' },
    ],
    [
      '--task Done with no landing naming it: met',
      facts({ only: { id: 'TASK-3', ran: false, onBoard: true, standing: { kind: 'done' } }, tasksEnded: 0 }),
      { outcome: 'nothing-to-do', note: 'TASK-3 is already Done on auto/work (no landing of the runner names it)' },
    ],
    [
      '--task parked: says so, with the reason and the fix',
      facts({
        only: {
          id: 'TASK-3',
          ran: false,
          onBoard: true,
          standing: { kind: 'parked', reason: 'gate failed: red (branch auto/TASK-3)' },
        },
        tasksEnded: 0,
      }),
      {
        outcome: 'failed',
        failure:
          'TASK-3 is parked on auto/work: gate failed: red (branch auto/TASK-3); fix what parked it, then `agent-runner unpark TASK-3` and queue it again',
      },
    ],
    [
      '--task Blocked: says so, with the reason',
      facts({
        only: { id: 'TASK-3', ran: false, onBoard: true, standing: { kind: 'blocked', reason: 'needs the API key' } },
        tasksEnded: 0,
      }),
      {
        outcome: 'failed',
        failure:
          'TASK-3 is Blocked on auto/work: needs the API key; answer what blocks it, set it To Do and queue it again',
      },
    ],
    [
      'a refused push wins over a note',
      facts({
        only: { id: 'TASK-3', ran: false, onBoard: true, standing: { kind: 'done' } },
        tasksEnded: 0,
        publish: { pushed: false, reason: 'push of auto/work refused: stale info', hasOrigin: true },
      }),
      { outcome: 'failed', failure: 'push of auto/work refused: stale info' },
    ],
    [
      '--task not on the board',
      facts({ only: { id: 'TASK-3', ran: false, onBoard: false }, tasksEnded: 0 }),
      { outcome: 'failed', failure: 'no task TASK-3 on auto/work' },
    ],
    [
      'a systemic failure fails the drain',
      facts({ systemicFailure: 'TASK-1: not-logged-in: no' }),
      { outcome: 'failed', failure: systemic },
    ],
    [
      'systemic wins over a stop',
      facts({ systemicFailure: 'TASK-1: not-logged-in: no', stopped: true }),
      { outcome: 'failed', failure: systemic },
    ],
    ['a stop interrupts', facts({ stopped: true }), { outcome: 'interrupted' }],
    ['a stop interrupts even with nothing run', facts({ stopped: true, tasksEnded: 0 }), { outcome: 'interrupted' }],
    [
      'a stop wins over a --task that did not run; its reason stays',
      facts({ stopped: true, only: { id: 'TASK-3', ran: false, onBoard: true }, tasksEnded: 0 }),
      {
        outcome: 'interrupted',
        failure: 'TASK-3 is not ready on auto/work; `agent-runner next` (which reads auto/work) says why',
      },
    ],
    [
      'a refused push fails the drain',
      facts({ publish: { pushed: false, reason: 'push of auto/work refused: stale info', hasOrigin: true } }),
      { outcome: 'failed', failure: 'push of auto/work refused: stale info' },
    ],
    [
      'no origin: nothing to push to, no failure',
      facts({ publish: { pushed: false, reason: 'no origin remote', hasOrigin: false } }),
      { outcome: 'drained' },
    ],
    ['pushed', facts({ publish: { pushed: true, reason: undefined, hasOrigin: true } }), { outcome: 'drained' }],
    [
      'auto/work moved outside the runner fails the drain, over a stop and a systemic failure',
      facts({ stagingMoved: 'auto/work was moved outside the runner', stopped: true, systemicFailure: 'x' }),
      { outcome: 'failed', failure: 'auto/work was moved outside the runner' },
    ],
  ];
  for (const [name, input, expected] of rows) t.same(drainOutcome(input), expected, name);
  const publishRows: [boolean, string, string | undefined, boolean][] = [
    [true, 'h', undefined, true],
    [true, 'h', 'old', true],
    [true, 'h', 'h', false],
    [false, 'h', 'old', false],
  ];
  for (const [push, head, remote, expected] of publishRows)
    t.equal(shouldPublish(push, head, remote), expected, `push=${push} head=${head} remote=${remote}`);
});
