// The staging verdicts, table by table: creating auto/work, repairing its
// worktree, bringing the base in, promote and the push after it.
import t from 'tap';
import {
  baseConflictMessage,
  baseStep,
  changesMatchTarget,
  nextWorktreeRepair,
  promoteVerdict,
  shouldPushBase,
  stagingStart,
  type WorktreeFacts,
  type WorktreeRepair,
} from '../../src/staging/verdict.js';
import { STAGING_BRANCH, STAGING_REF, taskBranch, taskIdOfBranch } from '../../src/staging/names.js';
import { baseFacts, promoteFacts } from '../helpers/verdict-builders.js';

t.test('the branch names', async (t) => {
  t.equal(STAGING_BRANCH, 'auto/work');
  t.equal(STAGING_REF, 'refs/heads/auto/work');
  t.equal(taskBranch('TASK-3'), 'auto/TASK-3');
  t.equal(taskIdOfBranch(taskBranch('TASK-3')), 'TASK-3');
});

t.test('stagingStart: a missing auto/work starts from published work, else the base', async (t) => {
  t.same(stagingStart({ exists: true, published: 'P', baseHead: 'B' }), { kind: 'exists' });
  t.same(stagingStart({ exists: false, published: 'P', baseHead: 'B' }), { kind: 'create', from: 'P' });
  t.same(stagingStart({ exists: false, published: undefined, baseHead: 'B' }), { kind: 'create', from: 'B' });
});

t.test('nextWorktreeRepair: each repair once, in order, until ready', async (t) => {
  const live = (fields: Partial<Extract<WorktreeFacts, { checkedOut: true }>>): WorktreeFacts => ({
    checkedOut: true,
    mergeInProgress: false,
    branch: 'auto/work',
    dirty: false,
    ...fields,
  });
  const none = new Set<WorktreeRepair['kind']>();
  const rows: [string, WorktreeFacts, ReadonlySet<WorktreeRepair['kind']>, WorktreeRepair][] = [
    ['missing: add it', { checkedOut: false }, none, { kind: 'add' }],
    ['added: ready as git made it', live({ dirty: true }), new Set(['add']), { kind: 'ready' }],
    ['an add that left no worktree is not retried', { checkedOut: false }, new Set(['add']), { kind: 'ready' }],
    ['clean and on auto/work: ready', live({}), none, { kind: 'ready' }],
    [
      'a half-done merge is aborted first',
      live({ mergeInProgress: true, branch: 'main', dirty: true }),
      none,
      { kind: 'abort-merge', note: 'aborted a merge left half-done in the staging worktree' },
    ],
    [
      'then the branch is put back',
      live({ branch: 'main', dirty: true }),
      new Set(['abort-merge']),
      { kind: 'checkout', note: 'staging worktree was on main; put back on auto/work' },
    ],
    [
      'a detached HEAD is put back',
      live({ branch: '' }),
      none,
      { kind: 'checkout', note: 'staging worktree was on a detached HEAD; put back on auto/work' },
    ],
    [
      'then changes are cleaned',
      live({ dirty: true }),
      new Set(['abort-merge', 'checkout']),
      { kind: 'clean', note: 'cleaned uncommitted changes from the staging worktree' },
    ],
    [
      'a repair is never repeated',
      live({ mergeInProgress: true, branch: 'x', dirty: true }),
      new Set(['abort-merge', 'checkout', 'clean']),
      { kind: 'ready' },
    ],
  ];
  for (const [name, facts, done, expected] of rows) t.same(nextWorktreeRepair(facts, done), expected, name);
});

t.test(
  'baseStep: accumulate merges the base in; reset recreates, never over unpromoted work without force',
  async (t) => {
    const refusal = `auto/work has 3 commit(s) not on the base branch (landed, unpromoted work); workBranchMode "reset" would throw them away. Run \`agent-runner promote\` or \`agent-runner discard\` first, or pass --force`;
    const rows: [string, ReturnType<typeof baseFacts>, ReturnType<typeof baseStep>][] = [
      ['accumulate, base contained: nothing to do', baseFacts(), { kind: 'up-to-date' }],
      [
        'accumulate, base moved: merge it in',
        baseFacts({ baseContained: false }),
        { kind: 'merge', message: 'Merge origin/main into auto/work' },
      ],
      [
        'reset over promoted work: reset',
        baseFacts({ mode: 'reset', unpromoted: 0, baseContained: false }),
        { kind: 'reset' },
      ],
      [
        'reset over unpromoted work: refused',
        baseFacts({ mode: 'reset', unpromoted: 3 }),
        { kind: 'refuse', message: refusal },
      ],
      [
        'reset over unpromoted work with force: reset',
        baseFacts({ mode: 'reset', unpromoted: 3, force: true }),
        { kind: 'reset' },
      ],
      [
        'reset, already at the base: nothing to do',
        baseFacts({ mode: 'reset', stagingHead: 'B', baseHead: 'B' }),
        { kind: 'up-to-date' },
      ],
      [
        'reset, just created from published work: the base merges in',
        baseFacts({ mode: 'reset', created: true, unpromoted: 2, baseContained: false }),
        { kind: 'merge', message: 'Merge origin/main into auto/work' },
      ],
    ];
    for (const [name, facts, expected] of rows) t.same(baseStep(facts), expected, name);
    t.equal(
      baseConflictMessage(['a', 'b'], '/s'),
      'merging the base branch into auto/work conflicts in a, b; nothing was changed. Resolve it by hand in /s (merge the base, commit), or run `agent-runner discard`',
    );
    t.equal(
      baseConflictMessage([], '/s'),
      'merging the base branch into auto/work conflicts; nothing was changed. Resolve it by hand in /s (merge the base, commit), or run `agent-runner discard`',
    );
  },
);

t.test('promoteVerdict: fast-forward only, never over local edits', async (t) => {
  const moved = (name: string) =>
    `${name} has moved: it has commits that auto/work does not, so promoting is not a fast-forward. Run orchestrate (it merges the base into auto/work and re-gates), then promote again; or discard`;
  const rows: [string, ReturnType<typeof promoteFacts>, ReturnType<typeof promoteVerdict>][] = [
    [
      'no auto/work',
      promoteFacts({ staging: undefined }),
      {
        kind: 'refuse',
        message: 'there is no auto/work branch in /w/repo: nothing to promote (run orchestrate first)',
      },
    ],
    [
      'origin moved',
      promoteFacts({
        bases: [
          { name: 'origin/main', sha: 'R', contained: false },
          { name: 'main', sha: 'B', contained: true },
        ],
      }),
      { kind: 'refuse', message: moved('origin/main') },
    ],
    [
      'the local base moved',
      promoteFacts({
        bases: [
          { name: 'origin/main', sha: 'B', contained: true },
          { name: 'main', sha: 'L', contained: false },
        ],
      }),
      { kind: 'refuse', message: moved('main') },
    ],
    ['already there', promoteFacts({ staging: 'B' }), { kind: 'nothing-to-do', at: 'B' }],
    ['base not checked out: move the ref', promoteFacts(), { kind: 'fast-forward', from: 'B', to: 'S', how: 'ref' }],
    [
      'no local base: from the remote one',
      promoteFacts({
        localBase: undefined,
        remoteBase: 'R',
        bases: [{ name: 'origin/main', sha: 'R', contained: true }],
      }),
      { kind: 'fast-forward', from: 'R', to: 'S', how: 'ref' },
    ],
    [
      'base checked out and clean: fast-forward the tree',
      promoteFacts({ checkout: { onBase: true, dirty: false } }),
      { kind: 'fast-forward', from: 'B', to: 'S', how: 'checkout' },
    ],
    [
      'base checked out with edits: refused',
      promoteFacts({ checkout: { onBase: true, dirty: true } }),
      { kind: 'refuse', message: '/w/repo has uncommitted changes on main; commit or stash them, then promote again' },
    ],
    [
      'already there with edits: nothing to do',
      promoteFacts({ staging: 'B', checkout: { onBase: true, dirty: true } }),
      { kind: 'nothing-to-do', at: 'B' },
    ],
    [
      "every change is auto/work's own: finish the interrupted fast-forward",
      promoteFacts({ checkout: { onBase: true, dirty: true, changesAreStaging: true } }),
      { kind: 'fast-forward', from: 'B', to: 'S', how: 'finish-interrupted' },
    ],
    [
      "auto/work's changes but the base moved: refused all the same",
      promoteFacts({
        checkout: { onBase: true, dirty: true, changesAreStaging: true },
        bases: [{ name: 'main', sha: 'L', contained: false }],
      }),
      { kind: 'refuse', message: moved('main') },
    ],
  ];
  for (const [name, facts, expected] of rows) t.same(promoteVerdict(facts), expected, name);
  const pushRows: [boolean, string | undefined, string | undefined, boolean][] = [
    [false, 'a', 'b', false],
    [true, 'a', 'a', false],
    [true, 'a', 'b', true],
    [true, 'a', undefined, true],
  ];
  for (const [hasOrigin, local, remote, expected] of pushRows)
    t.equal(
      shouldPushBase({ hasOrigin, local, remote }),
      expected,
      `origin=${hasOrigin} local=${local} remote=${remote}`,
    );
});

t.test("changesMatchTarget: a checkout holding only the target's versions (table)", async (t) => {
  const target = new Map([
    ['a.txt', 'A2'],
    ['b.txt', 'B1'],
  ]);
  const rows: [string, { path: string; deleted: boolean }[], Record<string, string>, boolean][] = [
    ['no change is not a leftover', [], {}, false],
    ["a new file with the target's content", [{ path: 'a.txt', deleted: false }], { 'a.txt': 'A2' }, true],
    ['an edit of its own', [{ path: 'a.txt', deleted: false }], { 'a.txt': 'mine' }, false],
    ['a file the target lacks, gone', [{ path: 'c.txt', deleted: true }], {}, true],
    ['a file the target has, gone', [{ path: 'b.txt', deleted: true }], {}, false],
    ['a file the target lacks, present', [{ path: 'd.txt', deleted: false }], { 'd.txt': 'D' }, false],
    [
      'one matching, one not',
      [
        { path: 'a.txt', deleted: false },
        { path: 'b.txt', deleted: false },
      ],
      { 'a.txt': 'A2', 'b.txt': 'B9' },
      false,
    ],
  ];
  for (const [name, changed, worktree, expected] of rows)
    t.equal(changesMatchTarget(changed, new Map(Object.entries(worktree)), target), expected, name);
});
