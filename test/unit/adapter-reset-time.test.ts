import t from 'tap';
import { parseResetTime } from '../../src/agent/adapters/reset-time.js';

t.test('epoch seconds need no anchor', async (t) => {
  t.equal(parseResetTime('Claude AI usage limit reached|1760000400', undefined), '2025-10-09T09:00:00.000Z');
});

t.test('a clock time in a zone is the next such time after now', async (t) => {
  const now = Date.parse('2026-04-01T13:42:35Z'); // 15:42 in Berlin (CEST, UTC+2)
  t.equal(parseResetTime("You've hit your limit · resets 8pm (Europe/Berlin)", now), '2026-04-01T18:00:00.000Z');
  t.equal(
    parseResetTime('resets 3pm (Europe/Berlin)', now),
    '2026-04-02T13:00:00.000Z',
    'already past today: tomorrow',
  );
  t.equal(
    parseResetTime('Your limit will reset at 9am (America/Chicago)', Date.parse('2025-12-22T02:00:00Z')),
    '2025-12-22T15:00:00.000Z',
  );
  t.equal(parseResetTime('resets 12am (UTC)', Date.parse('2026-01-01T10:00:00Z')), '2026-01-02T00:00:00.000Z');
  t.equal(
    parseResetTime('resets 4:30pm (Asia/Kolkata)', Date.parse('2026-01-01T00:00:00Z')),
    '2026-01-01T11:00:00.000Z',
  );
});

t.test('a date and time in a zone', async (t) => {
  t.equal(
    parseResetTime('resets Apr 23 at 4pm (America/Recife)', Date.parse('2026-04-22T13:39:51Z')),
    '2026-04-23T19:00:00.000Z',
  );
  t.equal(
    parseResetTime('resets Jan 2 at 1am (UTC)', Date.parse('2026-12-30T12:00:00Z')),
    '2027-01-02T01:00:00.000Z',
    'early next year',
  );
});

t.test('relative durations', async (t) => {
  const now = Date.parse('2026-03-01T00:00:00Z');
  t.equal(parseResetTime('try again in 4 days 2 hours 3 minutes.', now), '2026-03-05T02:03:00.000Z');
  t.equal(parseResetTime('Please try again in 37 seconds', now), '2026-03-01T00:00:37.000Z');
});

t.test('undefined when it cannot tell', async (t) => {
  t.equal(parseResetTime('resets 7pm (America/Los_Angeles)', undefined), undefined, 'relative without an anchor');
  t.equal(parseResetTime('resets 7pm (Mars/Olympus)', Date.parse('2026-01-01T00:00:00Z')), undefined, 'unknown zone');
  t.equal(parseResetTime('rate limited', Date.parse('2026-01-01T00:00:00Z')), undefined);
});
