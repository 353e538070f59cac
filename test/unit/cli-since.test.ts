// `--since` of logs, runs and ledger: one parser, a table of what it accepts and what it says to what it does not.
import t from 'tap';
import { parseSince, transcriptLinesSince, utcDayOf } from '../../src/cli/since.js';
import { UsageError } from '../../src/errors.js';

const NOW = Date.parse('2026-12-06T04:30:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const accepted: readonly [string, string][] = [
  ['90m', '2026-12-06T03:00:00.000Z'],
  ['2h', '2026-12-06T02:30:00.000Z'],
  ['3d', '2026-12-03T04:30:00.000Z'],
  ['1w', '2026-11-29T04:30:00.000Z'],
  ['45s', '2026-12-06T04:29:15.000Z'],
  ['0m', '2026-12-06T04:30:00.000Z'],
  ['today', '2026-12-06T00:00:00.000Z'],
  ['Yesterday', '2026-12-05T00:00:00.000Z'],
  ['2026-12-01', '2026-12-01T00:00:00.000Z'],
  ['2024-02-29', '2024-02-29T00:00:00.000Z'],
  ['2026-12-01T10:00', '2026-12-01T10:00:00.000Z'],
  ['2026-12-01 10:00', '2026-12-01T10:00:00.000Z'],
  ['2026-12-01T10:00:30', '2026-12-01T10:00:30.000Z'],
  ['2026-12-01T10:00:30.250Z', '2026-12-01T10:00:30.250Z'],
  ['2026-12-01T10:00+02:00', '2026-12-01T08:00:00.000Z'],
];

for (const [value, expected] of accepted)
  t.test(`accepts ${value}`, async (t) => t.equal(iso(parseSince('--since', value, NOW)), expected));

const HINT = 'give a duration (90m, 2h, 3d), yesterday, a day (2026-12-01) or a timestamp (2026-12-01T10:00, UTC)';
const refused: readonly [string, string][] = [
  ['', `--since "" is not a time; ${HINT}`],
  ['soon', `--since "soon" is not a time; ${HINT}`],
  ['2 hours', `--since "2 hours" is not a time; ${HINT}`],
  ['-2h', `--since "-2h" is not a time; ${HINT}`],
  ['2026-13-01', `--since "2026-13-01" is not a calendar day; ${HINT}`],
  ['2026-02-30', `--since "2026-02-30" is not a calendar day; ${HINT}`],
  ['2026-12-01T25:00', `--since "2026-12-01T25:00" is not a time of day; ${HINT}`],
  ['2026-12-01T10:61', `--since "2026-12-01T10:61" is not a time of day; ${HINT}`],
  ['2026-12-07', `--since "2026-12-07" is in the future (now is 2026-12-06T04:30:00.000Z); ${HINT}`],
  ['99999w', `--since "99999w" goes back more than ten years; ${HINT}`],
  ['12/01/2026', `--since "12/01/2026" is not a time; ${HINT}`],
];

for (const [value, message] of refused)
  t.test(`refuses "${value}"`, async (t) => {
    t.throws(() => parseSince('--since', value, NOW), UsageError);
    t.throws(() => parseSince('--since', value, NOW), { message });
  });

t.test('the UTC day of an instant: the ledger is filed by it', async (t) => {
  t.equal(utcDayOf(Date.parse('2026-12-01T23:59:59.999Z')), '2026-12-01');
  t.equal(utcDayOf(Date.parse('2026-12-02T00:00:00.000Z')), '2026-12-02');
});

t.test('transcript lines from an instant on; a line with no time goes with the one before', async (t) => {
  const at = (time: string, text: string) => JSON.stringify({ time, event: 'output', line: text });
  const lines = [
    at('2026-12-01T09:00:00.000Z', 'old'),
    'not json, after old',
    at('2026-12-01T10:00:00.000Z', 'at the instant'),
    JSON.stringify({ event: 'output', line: 'no time, after new' }),
    at('2026-12-01T11:00:00.000Z', 'newer'),
  ];
  t.same(transcriptLinesSince(lines, Date.parse('2026-12-01T10:00:00.000Z')), lines.slice(2));
  t.same(transcriptLinesSince(lines, Date.parse('2026-12-01T12:00:00.000Z')), []);
  t.same(transcriptLinesSince(lines, Date.parse('2026-12-01T08:00:00.000Z')), lines);
});
