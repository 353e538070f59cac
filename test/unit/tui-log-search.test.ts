// The log tab's search and the readable transcript on the repo screen, pure:
// which lines match, the next and previous match, the pieces to highlight,
// the line kept in view, and each transcript line's tone.
import t from 'tap';
import { highlightPieces, logMatches, nextMatch } from '../../tui/log-search.js';
import { buildOverlay, buildRepoScreen, emptyDetails, logSearchLines } from '../../tui/repo-view.js';
import { INITIAL_STATE } from '../../tui/console-state.js';
import { renderTranscript } from '../../src/control/transcripts/render.js';
import { aBusyRepo } from '../helpers/fleet-builder.js';
import { recordedTranscript } from '../helpers/transcript-fixture.js';

t.test('matches, any case, and moving between them', async (t) => {
  const lines = ['alpha', 'Beta npm', 'gamma', 'NPM delta'];
  t.same(logMatches(lines, 'npm'), [1, 3]);
  t.same(logMatches(lines, ''), [], 'no query, no match');
  t.equal(nextMatch([1, 3], null, 1), 1, 'the first');
  t.equal(nextMatch([1, 3], null, -1), 3, 'the last, backwards');
  t.equal(nextMatch([1, 3], 1, 1), 3);
  t.equal(nextMatch([1, 3], 3, 1), 1, 'wraps forwards');
  t.equal(nextMatch([1, 3], 1, -1), 3, 'wraps backwards');
  t.equal(nextMatch([1, 3], 2, -1), 1, 'from a line that no longer matches');
  t.equal(nextMatch([], null, 1), null);
  t.same(highlightPieces('npm test; NPM run', 'npm'), [
    { text: 'npm', match: true },
    { text: ' test; ', match: false },
    { text: 'NPM', match: true },
    { text: ' run', match: false },
  ]);
  t.same(highlightPieces('nothing', 'npm'), [{ text: 'nothing', match: false }]);
});

t.test('the log tab: a readable transcript, coloured by kind, the current match kept in view', async (t) => {
  const transcript = renderTranscript(recordedTranscript('claude', ['claude-2.1-max-budget.documented.jsonl']));
  const details = { ...emptyDetails('web'), log: { name: 'R1-TASK-1.jsonl', lines: transcript } };
  const repo = aBusyRepo('web', ['TASK-1']);
  const plain = buildRepoScreen(repo, { ...INITIAL_STATE, tab: 'log' }, details, 0);
  t.equal(plain.focus, -1);
  t.equal(plain.highlight, undefined);
  t.same(
    plain.lines.slice(1, 6).map((line) => [line.text, line.tone]),
    [
      ['10:00:00 run started: claude m1 effort high (model from config, effort from label)', 'busy'],
      ['10:00:01 session 1 started: claude', 'busy'],
      ['10:00:02 claude 2.1.197 session: model claude-sonnet-4-5-20250929, 4 tools, bypassPermissions', 'busy'],
      ['10:00:02 tool Bash: npm test', 'ok'],
      ['10:00:02   Bash result: 1 failing', 'muted'],
    ],
  );
  const searchLines = logSearchLines(details.log);
  const current = searchLines.findIndex((line) => line.includes('Bash result'));
  const searching = buildRepoScreen(
    repo,
    { ...INITIAL_STATE, tab: 'log', search: { query: 'bash', editing: false, current } },
    details,
    0,
  );
  t.equal(searching.lines[1]!.text, '/bash: 2 matching line(s); n next, N previous, Esc clears');
  t.equal(
    searching.lines[searching.focus]!.text,
    '10:00:02   Bash result: 1 failing',
    'the focus is the current match',
  );
  t.same(searching.highlight, { query: 'bash', current: searching.focus, from: 2 }, 'the head is not highlighted');
  const typing = buildRepoScreen(
    repo,
    { ...INITIAL_STATE, tab: 'log', search: { query: 'ba', editing: true, current: null } },
    details,
    0,
  );
  t.equal(typing.lines[1]!.text, '/ba_  (Enter finds, Esc cancels)');
});

t.test("the whole result's overlay", async (t) => {
  const view = buildOverlay({ kind: 'result', title: 'dispatch web', lines: ['a', 'stderr', '  b'] }, undefined, []);
  t.equal(view.title, 'dispatch web (any key closes, PgUp/PgDn scroll)');
  t.same(
    view.lines.map((line) => line.tone),
    ['plain', 'bad', 'plain'],
  );
});
