// The launch protocol's checks, one row per rule: what root refuses of a runner's request (and why), what the runner
// refuses of root's events, and the control rows that pass.
import t from 'tap';
import {
  encodeMessage,
  LAUNCH_LIMITS,
  outputEvent,
  parseEvent,
  parseRequest,
  utf8Bytes,
  type LaunchIds,
} from '../../src/launch/index.js';
import type { LaunchedIdentity } from '../../src/identities.js';

const BOTH: ReadonlySet<LaunchedIdentity> = new Set(['agent', 'gate']);
const AGENT_ONLY: ReadonlySet<LaunchedIdentity> = new Set(['agent']);
const FRESH: LaunchIds = { live: new Set(), last: 0 };
const start = (fields: Record<string, unknown> = {}) => ({
  op: 'start',
  id: 1,
  as: 'agent',
  program: '/bin/echo',
  args: ['hi'],
  env: { PATH: '/usr/bin:/bin' },
  cwd: '/tmp',
  ...fields,
});
const line = (message: unknown) => JSON.stringify(message);
const big = (bytes: number) => 'x'.repeat(bytes);

interface Row {
  readonly name: string;
  readonly line: string;
  readonly offered?: ReadonlySet<LaunchedIdentity>;
  readonly ids?: LaunchIds;
  /** undefined: accepted; else the words the reason must contain. */
  readonly refused?: RegExp;
  /** The id a refusal answers to (undefined: the line is ignored). */
  readonly answerId?: number;
}

const rows: readonly Row[] = [
  { name: 'control: a plain start', line: line(start()) },
  { name: 'control: a bare program name, looked up on PATH as the identity', line: line(start({ program: 'npm' })) },
  { name: 'control: a start with stdin, as the gate', line: line(start({ as: 'gate', stdin: 'input' })) },
  {
    name: 'control: a signal to a process started before',
    line: line({ op: 'signal', id: 3, signal: 'SIGTERM' }),
    ids: { live: new Set([3]), last: 3 },
  },
  {
    name: 'control: a signal to one that has exited (the two crossed)',
    line: line({ op: 'signal', id: 2, signal: 'SIGKILL' }),
    ids: { live: new Set(), last: 3 },
  },
  { name: 'control: bounds exactly at the limit', line: line(start({ args: Array(LAUNCH_LIMITS.args).fill(big(8)) })) },
  { name: 'not JSON', line: '{"op":', refused: /not JSON/ },
  { name: 'not an object', line: '[1,2]', refused: /not an object/ },
  { name: 'no id', line: line({ ...start(), id: undefined }), refused: /id is not a positive integer/ },
  { name: 'id zero', line: line(start({ id: 0 })), refused: /positive integer/ },
  { name: 'id negative', line: line(start({ id: -4 })), refused: /positive integer/ },
  { name: 'id a fraction', line: line(start({ id: 1.5 })), refused: /positive integer/ },
  { name: 'id a string', line: line(start({ id: '1' })), refused: /positive integer/ },
  {
    name: 'id not fresh (used before)',
    line: line(start({ id: 2 })),
    ids: { live: new Set(), last: 2 },
    refused: /not fresh/,
    answerId: 2,
  },
  {
    name: 'id of a live process',
    line: line(start({ id: 2 })),
    ids: { live: new Set([2]), last: 2 },
    refused: /not fresh/,
    answerId: 2,
  },
  { name: 'unknown op', line: line(start({ op: 'exec' })), refused: /unknown op "exec"/, answerId: 1 },
  { name: 'unknown field', line: line(start({ uid: 0 })), refused: /unknown field "uid"/, answerId: 1 },
  { name: 'as unknown', line: line(start({ as: 'root' })), refused: /"as" must be one of agent, gate/, answerId: 1 },
  { name: 'as the runner', line: line(start({ as: 'runner' })), refused: /"as" must be one of/, answerId: 1 },
  {
    name: 'as an identity not offered',
    line: line(start({ as: 'gate' })),
    offered: AGENT_ONLY,
    refused: /does not launch commands as the gate/,
    answerId: 1,
  },
  {
    name: 'program relative to a directory',
    line: line(start({ program: 'tools/agent.sh' })),
    refused: /program is neither an absolute path nor a bare name/,
  },
  { name: 'program ".."', line: line(start({ program: '..' })), refused: /program is neither/ },
  { name: 'program not a string', line: line(start({ program: 7 })), refused: /program is not a string/ },
  { name: 'cwd relative', line: line(start({ cwd: 'tmp' })), refused: /cwd is not an absolute path/ },
  { name: 'cwd missing', line: line(start({ cwd: undefined })), refused: /cwd is not a string/ },
  { name: 'NUL in program', line: line(start({ program: '/bin/echo\0x' })), refused: /program contains a NUL/ },
  { name: 'NUL in cwd', line: line(start({ cwd: '/tmp\0' })), refused: /cwd contains a NUL/ },
  { name: 'NUL in an arg', line: line(start({ args: ['a', 'b\0'] })), refused: /args\[1\] contains a NUL/ },
  { name: 'NUL in an env value', line: line(start({ env: { A: 'x\0y' } })), refused: /env A contains a NUL/ },
  { name: 'NUL in stdin', line: line(start({ stdin: 'a\0' })), refused: /stdin contains a NUL/ },
  { name: 'NUL in an env name', line: line(start({ env: { 'A\0B': 'x' } })), refused: /is not a variable name/ },
  { name: 'env name with =', line: line(start({ env: { 'A=B': 'x' } })), refused: /"A=B" is not a variable name/ },
  { name: 'env name starting with a digit', line: line(start({ env: { '1A': 'x' } })), refused: /not a variable name/ },
  { name: 'env name empty', line: line(start({ env: { '': 'x' } })), refused: /not a variable name/ },
  { name: 'env value not a string', line: line(start({ env: { A: 1 } })), refused: /env A is not a string/ },
  { name: 'env a list', line: line(start({ env: ['A=1'] })), refused: /env is not an object/ },
  { name: 'args not a list', line: line(start({ args: 'hi' })), refused: /args is not a list/ },
  { name: 'an arg not a string', line: line(start({ args: [1] })), refused: /args\[0\] is not a string/ },
  { name: 'stdin not a string', line: line(start({ stdin: 5 })), refused: /stdin is not a string/ },
  {
    name: 'too many args',
    line: line(start({ args: Array(LAUNCH_LIMITS.args + 1).fill('a') })),
    refused: /more than 4096 args/,
  },
  {
    name: 'an arg too long',
    line: line(start({ args: [big(LAUNCH_LIMITS.stringBytes + 1)] })),
    refused: /args\[0\] is longer than 131072 bytes/,
  },
  {
    name: 'an arg too long in UTF-8 bytes, not characters',
    line: line(start({ args: ['é'.repeat(LAUNCH_LIMITS.stringBytes / 2 + 1)] })),
    refused: /args\[0\] is longer/,
  },
  {
    name: 'stdin too long',
    line: line(start({ stdin: big(LAUNCH_LIMITS.stringBytes + 1) })),
    refused: /stdin is longer/,
  },
  {
    name: 'an env value too long',
    line: line(start({ env: { A: big(LAUNCH_LIMITS.stringBytes + 1) } })),
    refused: /env A is longer/,
  },
  {
    name: 'too many env entries',
    line: line(start({ env: Object.fromEntries(Array.from({ length: 513 }, (_, i) => [`V${i}`, '1'])) })),
    refused: /more than 512 env entries/,
  },
  {
    name: 'the line too long',
    line: line(start({ args: Array(10).fill(big(LAUNCH_LIMITS.stringBytes - 10)) })),
    refused: /line is longer than 1048576 bytes/,
    answerId: undefined,
  },
  {
    name: 'too many live processes',
    line: line(start({ id: 300 })),
    ids: { live: new Set(Array.from({ length: 256 }, (_, i) => i + 1)), last: 299 },
    refused: /256 processes are running already/,
    answerId: 300,
  },
  { name: 'a task id', line: line(start({ task: 'TASK-12' })) },
  {
    name: 'a task that is no task id',
    line: line(start({ task: '../x' })),
    refused: /task "\.\.\/x" is not a task id/,
  },
  { name: 'a task not a string', line: line(start({ task: 7 })), refused: /task "7" is not a task id/ },
  {
    name: 'signal unknown',
    line: line({ op: 'signal', id: 1, signal: 'SIGSTOP' }),
    ids: { live: new Set([1]), last: 1 },
    refused: /signal must be one of SIGTERM, SIGKILL/,
  },
  {
    name: 'signal to an id never started',
    line: line({ op: 'signal', id: 9, signal: 'SIGTERM' }),
    ids: { live: new Set([1]), last: 1 },
    refused: /no process was started with id 9/,
    answerId: 9,
  },
  {
    name: 'signal with an extra field (a pid)',
    line: line({ op: 'signal', id: 1, signal: 'SIGTERM', pid: 1 }),
    ids: { live: new Set([1]), last: 1 },
    refused: /unknown field "pid"/,
  },
];

/** The id a refusal of `text` answers: the request's own, when it is a usable one. */
function idOf(text: string): number | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

for (const row of rows) {
  t.test(row.name, async (t) => {
    const parsed = parseRequest(row.line, row.offered ?? BOTH, row.ids ?? FRESH);
    if (row.refused === undefined) {
      t.ok(parsed.ok, parsed.ok ? 'accepted' : `accepted, but refused: ${parsed.reason}`);
      return;
    }
    t.notOk(parsed.ok, 'refused');
    if (parsed.ok) return;
    t.match(parsed.reason, row.refused);
    const expectedId = 'answerId' in row ? row.answerId : idOf(row.line);
    t.equal(parsed.id, expectedId, expectedId === undefined ? 'ignored: no id to answer' : `answered as ${expectedId}`);
  });
}

t.test('an accepted start keeps its task', async (t) => {
  const parsed = parseRequest(line(start({ task: 'TASK-3' })), BOTH, FRESH);
  t.match(parsed, { ok: true, request: { task: 'TASK-3' } });
});

t.test('an accepted start carries exactly the request, nothing added', async (t) => {
  const parsed = parseRequest(line(start({ stdin: 'in' })), BOTH, FRESH);
  t.same(parsed, {
    ok: true,
    request: {
      op: 'start',
      id: 1,
      as: 'agent',
      program: '/bin/echo',
      args: ['hi'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/tmp',
      stdin: 'in',
    },
  });
});

const eventRows: readonly { name: string; line: string; refused?: RegExp }[] = [
  { name: 'control: started', line: line({ id: 1, event: 'started', pid: 42 }) },
  { name: 'control: stdout', line: line({ id: 1, event: 'stdout', line: 'hello' }) },
  { name: 'control: stderr', line: line({ id: 1, event: 'stderr', line: '' }) },
  { name: 'control: exited with a code', line: line({ id: 1, event: 'exited', exitCode: 3, signal: null }) },
  { name: 'control: exited of a signal', line: line({ id: 1, event: 'exited', exitCode: null, signal: 'SIGKILL' }) },
  { name: 'control: refused', line: line({ id: 1, event: 'refused', reason: 'no' }) },
  {
    name: "control: exited with the broker's rate-limit reset",
    line: line({ id: 1, event: 'exited', exitCode: 1, signal: null, rateLimitResetAt: '2026-12-02T20:00:00.000Z' }),
  },
  {
    name: 'a rate-limit reset that is no time',
    line: line({ id: 1, event: 'exited', exitCode: 1, signal: null, rateLimitResetAt: 'soon' }),
    refused: /rateLimitResetAt is not a time/,
  },
  { name: 'not JSON', line: 'nope', refused: /not JSON/ },
  { name: 'not an object', line: '"x"', refused: /not an object/ },
  { name: 'no id', line: line({ event: 'started', pid: 1 }), refused: /id is not a positive integer/ },
  { name: 'unknown event', line: line({ id: 1, event: 'forked' }), refused: /unknown event "forked"/ },
  {
    name: 'an inherited name as event',
    line: line({ id: 1, event: 'toString' }),
    refused: /unknown event "toString"/,
  },
  { name: 'pid zero', line: line({ id: 1, event: 'started', pid: 0 }), refused: /pid is not a positive/ },
  { name: 'pid a string', line: line({ id: 1, event: 'started', pid: '1' }), refused: /pid is not a positive/ },
  { name: 'line not a string', line: line({ id: 1, event: 'stdout', line: 5 }), refused: /line is not a string/ },
  {
    name: 'exitCode a fraction',
    line: line({ id: 1, event: 'exited', exitCode: 0.5, signal: null }),
    refused: /exitCode is not an integer/,
  },
  {
    name: 'signal not a signal name',
    line: line({ id: 1, event: 'exited', exitCode: null, signal: 'kill' }),
    refused: /signal is not a signal name/,
  },
  {
    name: 'exited with neither',
    line: line({ id: 1, event: 'exited', exitCode: null, signal: null }),
    refused: /neither exitCode nor signal/,
  },
  { name: 'reason missing', line: line({ id: 1, event: 'refused' }), refused: /reason is not a string/ },
  { name: 'extra field', line: line({ id: 1, event: 'started', pid: 3, uid: 0 }), refused: /unknown field "uid"/ },
  {
    name: 'the line too long',
    line: line({ id: 1, event: 'stdout', line: big(LAUNCH_LIMITS.lineBytes) }),
    refused: /line is longer/,
  },
];

for (const row of eventRows) {
  t.test(`event: ${row.name}`, async (t) => {
    const parsed = parseEvent(row.line);
    if (row.refused === undefined) t.ok(parsed.ok, parsed.ok ? 'accepted' : `accepted, but: ${parsed.reason}`);
    else t.match(parsed, { ok: false, reason: row.refused });
  });
}

t.test('an output line too long for one protocol line is cut to fit, and says so', async (t) => {
  const short = outputEvent(1, 'stdout', 'short');
  t.same(short, { id: 1, event: 'stdout', line: 'short' }, 'control: a short line is as it was');
  for (const text of [
    big(2 * LAUNCH_LIMITS.lineBytes),
    '\u0001'.repeat(LAUNCH_LIMITS.lineBytes),
    '😀'.repeat(400_000),
  ]) {
    const event = outputEvent(7, 'stderr', text);
    const encoded = encodeMessage(event);
    t.ok(utf8Bytes(encoded) <= LAUNCH_LIMITS.lineBytes, `fits (${utf8Bytes(encoded)} bytes)`);
    t.ok(utf8Bytes(encoded) > LAUNCH_LIMITS.lineBytes / 2, 'and keeps most of what fits');
    t.match(parseEvent(encoded), { ok: true, event: { id: 7, event: 'stderr', line: /\[cut: / } });
  }
});

t.test('utf8Bytes counts as UTF-8 does', async (t) => {
  for (const text of ['', 'abc', 'é', '€', '😀', 'a😀b\ud800', '\udc00x'])
    t.equal(utf8Bytes(text), Buffer.byteLength(text, 'utf8'), JSON.stringify(text));
});
