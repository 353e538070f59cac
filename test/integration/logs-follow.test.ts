// `agent-runner logs` against a real transcript on disk: the tail, --json,
// and -f following a transcript as it grows (a line written in two pieces
// shows once it is whole), then SIGINT ending it with exit 0; a recorded
// claude session rendered as a transcript, --raw byte for byte the file, and
// -f rendering what is appended.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { transcriptFile } from '../../src/paths.js';
import { renderTranscript } from '../../src/control/transcripts/render.js';
import { recordedStream, recordedTranscript, transcriptEvent } from '../helpers/transcript-fixture.js';

const BIN = path.join(PROJECT_ROOT, 'bin', 'agent-runner');
const event = (line: string, at = '2026-01-01T10:00:00.000Z') =>
  `${JSON.stringify({ time: at, event: 'output', stream: 'stdout', line })}\n`;

function setup(t: Test) {
  const root = tempDir(t);
  const workspace = path.join(root, 'repo');
  const state = path.join(root, 'state');
  mkdirSync(workspace);
  const file = transcriptFile(state, workspace, '20260101T100000Z-aa', 'TASK-1');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify({ time: '2026-01-01T09:59:59.000Z', event: 'run-start', assistant: 'command', model: 'm' })}\n${event('first line')}`,
  );
  // An older transcript of another task: not the one asked for.
  writeFileSync(transcriptFile(state, workspace, '20251231T000000Z-zz', 'TASK-2'), event('other task'));
  return {
    workspace,
    state,
    file,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', AGENT_RUNNER_STATE: state, LANG: 'C.UTF-8' },
  };
}

function start(env: Record<string, string>, args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, done, out: () => stdout, err: () => stderr };
}

async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('logs prints the tail of a task transcript, human or raw', async (t) => {
  const s = setup(t);
  const human = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1']);
  t.equal((await human.done).code, 0);
  t.equal(human.out(), '09:59:59 run started: command m\n10:00:00    | first line\n');
  t.match(human.err(), /^logs: 20260101T100000Z-aa-TASK-1\.jsonl$/m, 'stderr names the file');
  const raw = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '--json', '-n', '1']);
  t.equal((await raw.done).code, 0);
  t.equal(raw.out(), event('first line'), '--json: the raw line, the last one only');
  const missing = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-9']);
  t.equal((await missing.done).code, 1, 'no transcript of that task (and no board to tell whether it exists): exit 1');
  t.match(missing.err(), /no transcript of TASK-9/);
});

t.test('logs -f follows a growing transcript and exits 0 on SIGINT', async (t) => {
  const s = setup(t);
  const follow = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '-f']);
  t.teardown(() => {
    if (follow.child.exitCode === null && follow.child.signalCode === null) follow.child.kill('SIGKILL');
  });
  await until('the existing lines', () => follow.out().includes('first line'));
  appendFileSync(s.file, event('second line \u001b[2Jcleared?', '2026-01-01T10:00:01.000Z'));
  await until('the appended line', () => follow.out().includes('second line'));
  t.match(follow.out(), /10:00:01 {4}\| second line cleared\?\n/, 'control sequences stripped');
  const half = event('third line', '2026-01-01T10:00:02.000Z');
  appendFileSync(s.file, half.slice(0, 20));
  await new Promise((resolve) => setTimeout(resolve, 700));
  t.notMatch(follow.out(), /third/, 'half a line is not printed');
  appendFileSync(s.file, half.slice(20));
  await until('the completed line', () => follow.out().includes('third line'));
  t.equal(
    follow
      .out()
      .split('\n')
      .filter((line) => line.includes('third line')).length,
    1,
    'printed once',
  );
  follow.child.kill('SIGINT');
  const ended = await Promise.race([
    follow.done,
    new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5000)),
  ]);
  t.same(ended, { code: 0, signal: null }, 'SIGINT ends the follow with exit 0');
});

t.test('logs renders a recorded claude session as a transcript; --raw is the file as written', async (t) => {
  const s = setup(t);
  const text = recordedTranscript('claude', [
    'claude-2.1-max-budget.documented.jsonl',
    'claude-2.1-rate-limited.documented.jsonl',
  ]);
  writeFileSync(s.file, text);
  const human = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1']);
  t.equal((await human.done).code, 0);
  t.equal(
    human.out(),
    `${renderTranscript(text)
      .map((line) => line.text)
      .join('\n')}\n`,
    'the renderer, line for line',
  );
  t.match(human.out(), /^10:00:02 tool Bash: npm test$/m, 'a tool call with its input');
  t.match(human.out(), /^10:00:02 rate limit rejected \(five_hour\)/m, 'the rate limit');
  t.match(human.out(), /^10:00:02 result: error_max_budget_usd \(error\), 14 turns, 61\.2s; .*cost \$0\.5127$/m);
  t.notMatch(human.out(), /"type":"assistant"/, 'no raw JSON of known events');
  const tail = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '-n', '2']);
  t.equal((await tail.done).code, 0);
  t.equal(
    tail.out(),
    '10:00:03 session 2 ended: exit 0 (exit), ok; tokens 57 in, 2210 out; cost $0.1834\n10:00:04 run ended: done\n',
    '-n counts display lines',
  );
  const raw = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '--raw', '-n', '1000']);
  t.equal((await raw.done).code, 0);
  t.equal(raw.out(), text, '--raw: byte for byte the file');
  const json = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '--json', '-n', '1000']);
  t.equal((await json.done).code, 0);
  t.equal(json.out(), raw.out(), '--json prints what --raw prints');
});

t.test('logs -f renders what is appended; -f --raw prints it as written', async (t) => {
  const s = setup(t);
  const runStart = transcriptEvent(0, { event: 'run-start', assistant: 'claude', model: 'm1' });
  writeFileSync(s.file, runStart);
  const follow = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '-f']);
  const followRaw = start(s.env, ['logs', '--workspace', s.workspace, 'TASK-1', '-f', '--raw']);
  t.teardown(() => {
    for (const one of [follow, followRaw])
      if (one.child.exitCode === null && one.child.signalCode === null) one.child.kill('SIGKILL');
  });
  await until('the run start', () => follow.out().includes('run started') && followRaw.out() === runStart);
  const [init, toolUse, toolResult] = recordedStream('claude-2.1-max-budget.documented.jsonl');
  const appended = [init!, toolUse!, toolResult!]
    .map((line, i) => transcriptEvent(i + 1, { event: 'output', stream: 'stdout', line }))
    .join('');
  // Half of the tool's result first: nothing of it shows until the line is whole.
  appendFileSync(s.file, appended.slice(0, -40));
  await until('the tool call', () => follow.out().includes('tool Bash: npm test'));
  t.notMatch(follow.out(), /Bash result/);
  appendFileSync(s.file, appended.slice(-40));
  await until('its result, named by the call', () => follow.out().includes('10:00:03   Bash result: 1 failing'));
  await until('the raw lines', () => followRaw.out() === runStart + appended);
  t.equal(
    follow.out(),
    `${renderTranscript(runStart + appended)
      .map((line) => line.text)
      .join('\n')}\n`,
  );
  for (const one of [follow, followRaw]) one.child.kill('SIGINT');
  t.same(await follow.done, { code: 0, signal: null });
  t.same(await followRaw.done, { code: 0, signal: null });
});
