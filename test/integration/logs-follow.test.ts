// `agent-runner logs` against a real transcript on disk: the tail, --json,
// and -f following a transcript as it grows (a line written in two pieces
// shows once it is whole), then SIGINT ending it with exit 0.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { tempDir } from '../helpers/temp.js';
import { transcriptFile } from '../../src/paths.js';

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
