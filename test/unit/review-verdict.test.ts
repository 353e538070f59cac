// The review verdict, table by table: what a reviewer's document is worth
// (every rule can only withhold), and what comes after a usable one.
// Inputs are builder fakes.
import t from 'tap';
import {
  afterReview,
  findingKey,
  judgeVerdict,
  parseCitation,
  type ReviewEvidence,
  type ReviewExpectation,
  type ReviewJudgement,
  type ReviewPolicy,
  type RoundHistory,
} from '../../src/drain/verdict/review.js';
import { parseVerdictDoc } from '../../src/drain/review/verdict-doc.js';
import type { VerdictDoc } from '../../src/types.js';
import {
  aFinding,
  anEvidence,
  anExpectation,
  aPolicy,
  aVerdict,
  changes,
  met,
  unmet,
} from '../helpers/review-builders.js';

interface Row {
  readonly doc: VerdictDoc | { problem: string };
  readonly expected?: ReviewExpectation;
  readonly policy?: ReviewPolicy;
  readonly evidence?: ReviewEvidence;
  readonly judgement: ReviewJudgement;
}

const contradictory = (detail: string): ReviewJudgement => ({ kind: 'unusable', why: 'contradictory', detail });
const unverified = (detail: string): ReviewJudgement => ({ kind: 'unusable', why: 'unverified', detail });

function judge(row: Row): ReviewJudgement {
  return judgeVerdict(row.doc, row.expected ?? anExpectation(), row.policy ?? aPolicy(), row.evidence ?? anEvidence());
}

t.test('judgeVerdict: approve', async (t) => {
  const rows: [string, Row][] = [
    ['every criterion met with changed lines: approved', { doc: aVerdict(), judgement: { kind: 'approved' } }],
    [
      'a non-blocking finding does not stop an approval',
      { doc: aVerdict({ findings: [aFinding({ severity: 'nit' })] }), judgement: { kind: 'approved' } },
    ],
    [
      'one good citation among several is enough',
      {
        doc: aVerdict({ criteria: [met(1, 'README.md:1', 'src/cli.ts:14'), met(2, 'docs/flags.md:3')] }),
        judgement: { kind: 'approved' },
      },
    ],
    [
      'a task with no criteria: approve needs no entries',
      { doc: aVerdict({ criteria: [] }), expected: anExpectation({ criteria: [] }), judgement: { kind: 'approved' } },
    ],
    [
      'approve with an unmet criterion is contradictory',
      {
        doc: aVerdict({ criteria: [met(1), unmet(2)] }),
        judgement: contradictory('approved with criterion #2 "document it" unmet'),
      },
    ],
    [
      'approve with a missing criterion is contradictory',
      {
        doc: aVerdict({ criteria: [met(1)] }),
        judgement: contradictory('criterion #2 "document it" is not judged'),
      },
    ],
    [
      'a criterion judged twice is contradictory',
      {
        doc: aVerdict({ criteria: [met(1), met(2, 'docs/flags.md:3'), met(1)] }),
        judgement: contradictory('criterion #1 is judged twice'),
      },
    ],
    [
      'a criterion the task does not have is contradictory',
      {
        doc: aVerdict({ criteria: [met(1), met(2, 'docs/flags.md:3'), met(7)] }),
        judgement: contradictory("criterion #7 is not one of the task's (#1, #2)"),
      },
    ],
    [
      'a criterion on a task with none is contradictory',
      {
        doc: aVerdict({ criteria: [met(1)] }),
        expected: anExpectation({ criteria: [] }),
        judgement: contradictory("criterion #1 is not one of the task's (it has none)"),
      },
    ],
    [
      'approve with a blocking finding is contradictory',
      {
        doc: aVerdict({ findings: [aFinding()] }),
        judgement: contradictory('approved with a blocking finding (major at src/cli.ts:12: "the flag is read twice")'),
      },
    ],
    [
      'blocking is the repo policy: a minor blocks when the repo says so',
      {
        doc: aVerdict({ findings: [aFinding({ severity: 'minor', location: '' })] }),
        policy: aPolicy({ blockingSeverities: ['blocker', 'major', 'minor'] }),
        judgement: contradictory('approved with a blocking finding (minor: "the flag is read twice")'),
      },
    ],
  ];
  for (const [name, row] of rows) t.same(judge(row), row.judgement, name);
});

t.test('judgeVerdict: another round, task, nonce or commit is contradictory', async (t) => {
  const rows: [string, Row][] = [
    [
      'wrong task',
      { doc: aVerdict({ task_id: 'TASK-4' }), judgement: contradictory('the verdict is for "TASK-4", not TASK-3') },
    ],
    [
      'an earlier round (stale)',
      {
        doc: aVerdict({ round: 1 }),
        expected: anExpectation({ round: 2 }),
        judgement: contradictory('the verdict is for round 1, not round 2'),
      },
    ],
    [
      'a replayed nonce, not repeated in the reason',
      {
        doc: aVerdict({ nonce: 'last-rounds-nonce' }),
        judgement: contradictory("the verdict's nonce is not this round's (a replayed or made-up verdict)"),
      },
    ],
    [
      'a wrong SHA',
      {
        doc: aVerdict({ candidate: 'd'.repeat(40) }),
        judgement: contradictory('the verdict reviewed dddddddddddd, not the candidate cccccccccccc'),
      },
    ],
    [
      'a wrong SHA wins over an unmet criterion: the identity is checked first',
      {
        doc: aVerdict({ candidate: 'd'.repeat(40), criteria: [met(1), unmet(2)] }),
        judgement: contradictory('the verdict reviewed dddddddddddd, not the candidate cccccccccccc'),
      },
    ],
  ];
  for (const [name, row] of rows) t.same(judge(row), row.judgement, name);
});

t.test('judgeVerdict: a met criterion must cite a line that backs it', async (t) => {
  const lax = aPolicy({ requireDiffEvidence: false });
  const rows: [string, Row][] = [
    [
      'an untouched line is unverified',
      {
        doc: aVerdict({ criteria: [met(1, 'src/cli.ts:30'), met(2, 'docs/flags.md:3')] }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing src/cli.ts:30, a line the change does not touch',
        ),
      },
    ],
    [
      'a line of an untouched file is unverified',
      {
        doc: aVerdict({ criteria: [met(1, 'README.md:1'), met(2, 'docs/flags.md:3')] }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing README.md:1, a line the change does not touch',
        ),
      },
    ],
    [
      'a nonexistent line is unverified',
      {
        doc: aVerdict({ criteria: [met(1, 'src/cli.ts:99'), met(2, 'docs/flags.md:3')] }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing src/cli.ts:99, a line that does not exist at the candidate',
        ),
      },
    ],
    [
      'a nonexistent file is unverified',
      {
        doc: aVerdict({ criteria: [met(1), met(2, 'docs/nope.md:1')] }),
        judgement: unverified(
          'criterion #2 "document it" is claimed met citing docs/nope.md:1, a line that does not exist at the candidate',
        ),
      },
    ],
    [
      'the line just past a changed range is untouched',
      {
        doc: aVerdict({ criteria: [met(1, 'src/cli.ts:15'), met(2, 'docs/flags.md:3')] }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing src/cli.ts:15, a line the change does not touch',
        ),
      },
    ],
    [
      'no evidence at all is unverified',
      {
        doc: aVerdict({ criteria: [{ criterion: 1, met: true, evidence: [], note: '' }, met(2, 'docs/flags.md:3')] }),
        judgement: unverified('criterion #1 "parse the flag" is claimed met with no evidence'),
      },
    ],
    [
      'every bad citation is named, up to two',
      {
        doc: aVerdict({ criteria: [met(1, 'src/cli.ts:1', 'src/cli.ts:99', 'x'), met(2, 'docs/flags.md:3')] }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing src/cli.ts:1, a line the change does not touch; and src/cli.ts:99, a line that does not exist at the candidate',
        ),
      },
    ],
    [
      'requireDiffEvidence false: an untouched line that exists passes',
      {
        doc: aVerdict({ criteria: [met(1, 'README.md:12'), met(2, 'src/cli.ts:40')] }),
        policy: lax,
        judgement: { kind: 'approved' },
      },
    ],
    [
      'requireDiffEvidence false: a nonexistent line still does not',
      {
        doc: aVerdict({ criteria: [met(1, 'README.md:13'), met(2, 'docs/flags.md:3')] }),
        policy: lax,
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing README.md:13, a line that does not exist at the candidate',
        ),
      },
    ],
    [
      'a changed line counts even where the line count does not know the file',
      {
        doc: aVerdict(),
        evidence: anEvidence({ lineCount: () => undefined }),
        judgement: { kind: 'approved' },
      },
    ],
    [
      'a changes verdict is held to its claims too',
      {
        doc: aVerdict({
          verdict: 'changes_requested',
          criteria: [met(1, 'src/cli.ts:30'), unmet(2)],
        }),
        judgement: unverified(
          'criterion #1 "parse the flag" is claimed met citing src/cli.ts:30, a line the change does not touch',
        ),
      },
    ],
  ];
  for (const [name, row] of rows) t.same(judge(row), row.judgement, name);
});

t.test('judgeVerdict: changes requested', async (t) => {
  const nit = aFinding({ severity: 'nit', location: '', message: 'typo' });
  const rows: [string, Row][] = [
    [
      'an unmet criterion and a blocking finding: changes',
      {
        doc: aVerdict({ verdict: 'changes_requested', criteria: [met(1), unmet(2)], findings: [aFinding(), nit] }),
        judgement: {
          kind: 'changes',
          unmet: [{ index: 2, text: 'document it' }],
          blocking: [aFinding()],
          findings: [aFinding(), nit],
        },
      },
    ],
    [
      'everything met, only a nit: still changes (the reviewer asked)',
      {
        doc: aVerdict({ verdict: 'changes_requested', findings: [nit] }),
        judgement: { kind: 'changes', unmet: [], blocking: [], findings: [nit] },
      },
    ],
    [
      'everything met and no finding: contradictory',
      {
        doc: aVerdict({ verdict: 'changes_requested' }),
        judgement: contradictory('changes requested, but every criterion is met and there is no finding'),
      },
    ],
    [
      'no criteria and no finding: contradictory',
      {
        doc: aVerdict({ verdict: 'changes_requested', criteria: [] }),
        expected: anExpectation({ criteria: [] }),
        judgement: contradictory('changes requested, but every criterion is met and there is no finding'),
      },
    ],
  ];
  for (const [name, row] of rows) t.same(judge(row), row.judgement, name);
});

t.test('judgeVerdict: no usable document is unreadable', async (t) => {
  const rows: [string, string | undefined, RegExp][] = [
    ['missing', undefined, /^no verdict$/],
    ['empty', '', /^no verdict$/],
    ['blank', ' \n', /^no verdict$/],
    ['garbage', 'LGTM!', /^the verdict is not JSON/],
    ['JSON of another shape', '{"ok": true}', /^the verdict is not in the schema's shape: ok: is not a key/],
    ['over the cap', JSON.stringify(aVerdict({ summary: 'x'.repeat(300 * 1024) })), /^the verdict is \d+ bytes/],
  ];
  for (const [name, text, detail] of rows) {
    const judgement = judge({ doc: parseVerdictDoc(text), judgement: { kind: 'approved' } });
    t.equal(judgement.kind === 'unusable' && judgement.why, 'unreadable', name);
    t.match(judgement.kind === 'unusable' && judgement.detail, detail, name);
  }
  t.same(judge({ doc: parseVerdictDoc(JSON.stringify(aVerdict())), judgement: { kind: 'approved' } }), {
    kind: 'approved',
  });
});

t.test('parseCitation reads path:line, the last colon deciding', async (t) => {
  t.same(parseCitation('src/a.ts:12'), { path: 'src/a.ts', line: 12 });
  t.same(parseCitation('dir:with:colons/a b.ts:3'), { path: 'dir:with:colons/a b.ts', line: 3 });
  for (const bad of ['src/a.ts', 'src/a.ts:0', 'src/a.ts:-1', ':3', 'src/a.ts:3-5', 'a.ts:L3', ''])
    t.equal(parseCitation(bad), undefined, JSON.stringify(bad));
});

t.test('afterReview: land, fix, or park with a named reason', async (t) => {
  const missing = aFinding({ location: 'src/cli.ts:12', message: 'the flag is read twice' });
  const other = aFinding({ severity: 'blocker', location: 'src/io.ts:3', message: 'the file is never closed' });
  const rows: [string, Parameters<typeof afterReview>[0], RoundHistory, number, ReturnType<typeof afterReview>][] = [
    ['an approval lands', { kind: 'approved' }, { fixes: 0 }, 2, { kind: 'land' }],
    [
      'an approval after fixes lands',
      { kind: 'approved' },
      { fixes: 2, previous: changes({ findings: [missing] }) },
      2,
      { kind: 'land' },
    ],
    ['changes with fix rounds left: fix', changes({ findings: [missing] }), { fixes: 0 }, 2, { kind: 'fix' }],
    [
      'changes after one fix, a new finding: fix again',
      changes({ findings: [other] }),
      { fixes: 1, previous: changes({ findings: [missing] }) },
      2,
      { kind: 'fix' },
    ],
    [
      'changes at maxRounds: park',
      changes({ findings: [other] }),
      { fixes: 2, previous: changes({ findings: [missing] }) },
      2,
      {
        kind: 'park',
        reason: 'review: changes requested after 2 fix round(s): blocker at src/io.ts:3: "the file is never closed"',
      },
    ],
    [
      'maxRounds 0 parks on the first changes',
      changes({ unmet: [{ index: 2, text: 'document it' }], findings: [missing, other] }),
      { fixes: 0 },
      0,
      {
        kind: 'park',
        reason:
          'review: changes requested after 0 fix round(s): criterion #2 "document it" unmet; major at src/cli.ts:12: "the flag is read twice" (and 1 more)',
      },
    ],
    [
      'the same finding survives a fix round (moved, recased): park',
      changes({ findings: [other, { ...missing, location: 'src/cli.ts:20', message: 'The flag is read  twice.' }] }),
      { fixes: 1, previous: changes({ findings: [missing] }) },
      3,
      {
        kind: 'park',
        reason: 'review: the same finding survived a fix round: major at src/cli.ts:20: "The flag is read twice."',
      },
    ],
    [
      'the same unmet criterion survives a fix round: park',
      changes({ unmet: [{ index: 2, text: 'document it' }] }),
      { fixes: 1, previous: changes({ unmet: [{ index: 2, text: 'document it' }], findings: [missing] }) },
      3,
      { kind: 'park', reason: 'review: the same finding survived a fix round: criterion #2 "document it" unmet' },
    ],
    [
      'a finding whose severity changed is a new one',
      changes({ findings: [{ ...missing, severity: 'blocker' }] }),
      { fixes: 1, previous: changes({ findings: [missing] }) },
      2,
      { kind: 'fix' },
    ],
    [
      'a finding in another file is a new one',
      changes({ findings: [{ ...missing, location: 'src/other.ts:12' }] }),
      { fixes: 1, previous: changes({ findings: [missing] }) },
      2,
      { kind: 'fix' },
    ],
    [
      'messages that differ by a round number are different findings (a loop that never converges runs to maxRounds)',
      changes({ findings: [{ ...missing, message: 'still wrong (round 2)' }] }),
      { fixes: 1, previous: changes({ findings: [{ ...missing, message: 'still wrong (round 1)' }] }) },
      2,
      { kind: 'fix' },
    ],
  ];
  for (const [name, judgement, history, maxRounds, step] of rows)
    t.same(afterReview(judgement, history, maxRounds), step, name);
});

t.test('findingKey: severity, path and the message folded; the line is not part of it', async (t) => {
  const key = findingKey(aFinding({ location: 'src/cli.ts:12', message: 'Read  twice!' }));
  t.equal(findingKey(aFinding({ location: 'src/cli.ts:40', message: 'read twice' })), key);
  t.not(findingKey(aFinding({ location: 'src/cli.ts:12', message: 'read thrice' })), key);
  t.not(findingKey(aFinding({ severity: 'minor', location: 'src/cli.ts:12', message: 'read twice' })), key);
  t.equal(findingKey(aFinding({ location: '', message: 'x' })), findingKey(aFinding({ location: '', message: 'X.' })));
});
