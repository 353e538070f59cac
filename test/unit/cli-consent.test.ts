// discard and gc ask first: what the flags and the terminal allow, what counts as a yes, and gc's list of what goes.
import t from 'tap';
import { consentFlag, consentStep, isYes } from '../../src/cli/consent.js';
import { gcPlanLines } from '../../src/cli/gc.js';
import { UsageError } from '../../src/errors.js';

const steps: readonly [string, { yes?: boolean; dryRun?: boolean }, boolean, string | RegExp][] = [
  ['a terminal and no flag: ask', {}, true, 'ask'],
  ['--yes: act, terminal or not', { yes: true }, false, 'act'],
  ['--yes on a terminal: act', { yes: true }, true, 'act'],
  ['--dry-run: the plan, terminal or not', { dryRun: true }, false, 'plan'],
  [
    'no terminal and no flag: refused',
    {},
    false,
    /^discard asks before it removes anything, and stdin is not a terminal; pass --yes to discard without asking, or --dry-run to print what it would remove$/,
  ],
  ['both flags: refused', { yes: true, dryRun: true }, true, /^discard: --yes and --dry-run exclude each other/],
];

for (const [name, options, canAsk, expected] of steps)
  t.test(name, async (t) => {
    if (expected instanceof RegExp) {
      t.throws(() => consentStep('discard', options, canAsk), UsageError);
      t.throws(() => consentStep('discard', options, canAsk), { message: expected });
    } else t.equal(consentStep('discard', options, canAsk), expected);
  });

t.test('the decision passed on to the repo user', async (t) => {
  t.equal(consentFlag('plan'), '--dry-run');
  t.equal(consentFlag('act'), '--yes');
  t.equal(consentFlag('ask'), '--yes', 'asked and answered yes');
});

t.test('only y or yes is a yes', async (t) => {
  for (const answer of ['y', 'Y', 'yes', 'YES', ' y ']) t.ok(isYes(answer), answer);
  for (const answer of [undefined, '', 'n', 'no', 'yy', 'yes please', 'j']) t.notOk(isYes(answer), String(answer));
});

t.test("gc's list, and nothing to ask when nothing goes", async (t) => {
  const none = { runRecords: 0, jobs: 0, transcripts: 0, drains: 0 };
  t.equal(gcPlanLines('web', { workspace: '/w', taskBranches: [], expired: none, retentionDays: 30 }), undefined);
  t.same(
    gcPlanLines('web', {
      workspace: '/w',
      taskBranches: ['auto/TASK-3'],
      expired: { ...none, transcripts: 2, runRecords: 1 },
      retentionDays: 7,
    }),
    [
      'gc web removes:',
      '  task branches and worktrees: auto/TASK-3',
      '  older than 7 days: 2 transcript(s), 1 run record(s), 0 drain summary(ies), 0 finished job(s)',
    ],
  );
});
