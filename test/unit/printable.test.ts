// Agent text on root's terminal: hostile strings come out inert.
/* eslint-disable no-control-regex -- the assertions look for control characters */
import t from 'tap';
import { escapeForTerminal, printable, printableLine } from '../../src/printable.js';
import { renderRunHuman } from '../../src/control/runs/render.js';
import { renderTaskTable, progressPrinter } from '../../src/cli/drain-output.js';
import { renderStatus } from '../../src/cli/status.js';
import { runCli } from '../../src/cli/commands.js';

const ESC = '\u001b';
const HOSTILE: Record<string, string> = {
  'OSC 0 window title (BEL)': `a${ESC}]0;pwned by agent\u0007b`,
  'OSC 0 window title (ST)': `a${ESC}]0;pwned${ESC}\\b`,
  'CSI 2J clear screen': `a${ESC}[2J${ESC}[Hb`,
  'CSI with private params (alt screen, hide cursor)': `a${ESC}[?1049h${ESC}[?25lb`,
  'OSC 52 clipboard write': `a${ESC}]52;c;ZWNobyBwd25lZA==\u0007b`,
  'C1 CSI 0x9b': 'a\u009b2Jb',
  'C1 OSC 0x9d': 'a\u009d0;title\u009cb',
  'DCS string': `a${ESC}Pq#0;2;0;0;0\u001b\\b`,
  'charset switch and reset': `a${ESC}(0${ESC}cb`,
  'carriage return overwrite': 'a\rb',
  'backspace and bell': 'a\b\u0007b',
  'bidi override': 'a\u202eb',
  'bidi isolate': 'a\u2066\u2069b',
  'zero width space and BOM': 'a\u200b\ufeffb',
  DEL: 'a\u007fb',
  'line separator': 'a\u2028b',
  'tag characters': 'a\udb40\udc41b',
};

t.test('every hostile string is reduced to its printable text', async (t) => {
  for (const [name, text] of Object.entries(HOSTILE)) {
    const clean = printable(text);
    t.equal(clean, 'ab', name);
    t.notMatch(
      clean,
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/,
      `${name}: no control left`,
    );
  }
});

t.test('ordinary text survives, newlines and tabs on request', async (t) => {
  t.equal(
    printable('Fix the login page: ümlaut, 日本語, emoji 🎉\n\tdone'),
    'Fix the login page: ümlaut, 日本語, emoji 🎉\n\tdone',
  );
  t.equal(printableLine('one\ntwo\tthree'), 'one two three', 'a title cannot forge a line of its own');
  t.equal(printable(`${ESC}[`), '', 'a truncated CSI is dropped');
  t.equal(printable(`${ESC}]0;never terminated`), '', 'an unterminated OSC swallows to the end');
});

t.test('the sink guard escapes what is left, losslessly for JSON', async (t) => {
  const json = JSON.stringify({ title: `x\u009b2J\u202ey${ESC}]0;t\u0007` });
  const guarded = escapeForTerminal(json);
  t.notMatch(guarded, /[\u0000-\u001f\u007f-\u009f\u202e]/);
  t.same(JSON.parse(guarded), JSON.parse(json), 'the JSON means the same');
  t.equal(escapeForTerminal(`a${ESC}[2Jb\n`), 'a\\u001b[2Jb\n');
  t.equal(escapeForTerminal('a\udb40\udc41b'), 'a\\udb40\\udc41b');
});

const TITLE = `Evil${ESC}]0;owned\u0007${ESC}[2J\rTASK-9 landed\u009b31m`;

t.test('renderers print agent text inert', async (t) => {
  const run = renderRunHuman({
    id: 'r1',
    repo: 'web',
    status: 'finished',
    outcome: 'drained',
    tasks: [{ id: 'TASK-1', outcome: 'parked', title: TITLE, reason: `gate ${ESC}[31mred` }],
    detail: `d${ESC}]52;c;eA==\u0007`,
  } as never);
  t.notMatch(run, /[\u001b\u0007\r\u009b]/);
  t.match(run, 'EvilTASK-9 landed');
  const table = renderTaskTable([
    { id: 'TASK-1', outcome: 'parked', title: TITLE, reason: undefined, durationMs: 1000 },
  ] as never);
  t.notMatch(table, /[\u001b\u0007\r\u009b]/);
  let progress = '';
  progressPrinter(
    { err: (text) => (progress += text) },
    'human',
  )({ event: 'task-started', time: '2026-01-01T00:00:00Z', taskId: 'TASK-1', title: TITLE } as never);
  t.equal(progress, '00:00:00 TASK-1 started: EvilTASK-9 landed\n');
  const status = renderStatus({
    baseBranch: 'main',
    baseRef: 'refs/heads/main',
    base: 'a'.repeat(40),
    staging: undefined,
    ahead: 0,
    behind: 0,
    landed: [{ taskId: 'TASK-1', commit: 'b'.repeat(40), subject: TITLE }],
    parked: [{ id: 'TASK-2', reason: TITLE }],
    blocked: [{ id: 'TASK-3', reason: `x\r${ESC}[1Ay` }],
  } as never);
  t.notMatch(status, /[\u001b\u0007\r\u009b]/);
});

t.test('every CLI output passes the sink guard', async (t) => {
  let out = '';
  let err = '';
  const code = await runCli(['no-such-command', `${ESC}]0;pwned\u0007`], {
    env: {},
    cwd: '/',
    ports: {} as never,
    stdoutIsTTY: false,
    out: (text) => (out += text),
    err: (text) => (err += text),
    terminate: new AbortController().signal,
    uid: 1000,
    selfBin: '/x',
  });
  t.not(code, 0);
  t.notMatch(out + err, /[\u001b\u0007]/);
});
