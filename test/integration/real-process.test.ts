// realProcess.run against real programs: what every git call and check the
// runner makes rests on. A new session with no terminal, stdin from /dev/null
// unless there is input, exact output bytes, and a command that cannot start
// answered with its failure in words (every time: node also reports such a
// command as closed with exit code -errno, and that must never win).
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { realProcess } from '../../src/io/real-ports.js';
import type { Command } from '../../src/types.js';
import { tempDir } from '../helpers/temp.js';

const ENV = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };
const sh = (script: string, extra: Partial<Command> = {}): Command => ({
  program: 'sh',
  args: ['-c', script],
  env: ENV,
  cwd: '/',
  ...extra,
});

t.test('output, input, exit codes and signals come back exactly', async (t) => {
  const dir = tempDir(t);
  const bytes = path.join(dir, 'bytes');
  writeFileSync(bytes, Buffer.from(Array.from({ length: 256 }, (_, index) => index)));
  t.same(
    await realProcess.run({ program: 'printf', args: ['%s|%s\n', 'a b', 'ü'], env: ENV, cwd: dir }),
    { exitCode: 0, signal: null, stdout: 'a b|ü\n', stderr: '' },
    'arguments with spaces, UTF-8 output',
  );
  t.equal(
    (await realProcess.run({ program: 'od', args: ['-An', '-c'], env: ENV, cwd: dir, stdin: 'a\0b' })).stdout
      .replace(/\s+/g, ' ')
      .trim(),
    'a \\0 b',
    'input with a NUL arrives whole',
  );
  t.same(
    await realProcess.run(sh('cat; readlink /proc/self/fd/0')),
    { exitCode: 0, signal: null, stdout: '/dev/null\n', stderr: '' },
    'no input: stdin is /dev/null',
  );
  t.same(
    await realProcess.run(sh('echo out; echo err >&2; exit 3')),
    { exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n' },
    'exit code, stdout and stderr apart',
  );
  t.same(
    await realProcess.run(sh('kill -TERM $$')),
    { exitCode: null, signal: 'SIGTERM', stdout: '', stderr: '' },
    'killed by a signal',
  );
  const binary = await realProcess.run({ program: 'cat', args: [bytes], env: ENV, cwd: dir, binaryStdout: true });
  t.same(
    [...Buffer.from(binary.stdout, 'latin1')],
    Array.from({ length: 256 }, (_, index) => index),
    'binary output, byte for byte',
  );
});

t.test('a new session, no terminal, default signal handling', async (t) => {
  const stat = (await realProcess.run({ program: 'cat', args: ['/proc/self/stat'], env: ENV, cwd: '/' })).stdout;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const pid = Number(stat.slice(0, stat.indexOf(' ')));
  t.equal(Number(fields[3]), pid, 'it leads its own session');
  t.equal(Number(fields[4]), 0, 'with no controlling terminal');
  t.match(
    (await realProcess.run({ program: 'grep', args: ['-E', '^Sig(Blk|Ign)', '/proc/self/status'], env: ENV, cwd: '/' }))
      .stdout,
    /^SigBlk:\t0+\nSigIgn:\t0+\n$/,
    'no signal blocked or ignored',
  );
});

t.test('a command that cannot start: its failure, in words, every time', async (t) => {
  const dir = tempDir(t);
  writeFileSync(path.join(dir, 'not-executable'), '#!/bin/sh\n');
  // One at a time: the race with close was lost about one time in ten that way (a missing directory).
  const seen = new Map<string, number>();
  for (let attempt = 0; attempt < 100; attempt++) {
    const results = [
      await realProcess.run({ program: 'no-such-program-here', args: [], env: ENV, cwd: dir }),
      await realProcess.run({ program: 'true', args: [], env: ENV, cwd: path.join(dir, 'gone') }),
      await realProcess.run({ program: path.join(dir, 'not-executable'), args: [], env: ENV, cwd: dir }),
    ];
    const key = JSON.stringify(results);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  t.same(
    [...seen.keys()].map((key) => JSON.parse(key) as unknown),
    [
      [
        { exitCode: 127, signal: null, stdout: '', stderr: 'no-such-program-here: spawn no-such-program-here ENOENT' },
        {
          exitCode: 127,
          signal: null,
          stdout: '',
          stderr: `true: cannot start in ${path.join(dir, 'gone')}: the directory does not exist`,
        },
        {
          exitCode: 126,
          signal: null,
          stdout: '',
          stderr: `${path.join(dir, 'not-executable')}: spawn ${path.join(dir, 'not-executable')} EACCES`,
        },
      ],
    ],
    'the same answers in all 100 attempts',
  );
});

t.test('a started process has exited when it has, whatever it left holding its output', async (t) => {
  const dir = tempDir(t);
  const pidFile = path.join(dir, 'leftover');
  t.teardown(() => {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {
      // never started, or gone
    }
  });
  const lines: string[] = [];
  const startedAt = Date.now();
  // The leftover inherits stdout and stderr, in a session of its own, as `setsid sleep 600 &` in an agent does.
  const started = realProcess.start(sh(`setsid sleep 60 & echo $! > '${pidFile}'; echo early`), {
    onStdoutLine: (line) => lines.push(line),
    onStderrLine: () => undefined,
  });
  t.same(await started.exited, { exitCode: 0, signal: null });
  const took = Date.now() - startedAt;
  t.ok(took < 10_000, `exited after ${took} ms, not when the 60 s leftover ends`);
  t.same(lines, ['early']);
  t.ok(existsSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}`), 'the leftover is not ended here');

  // Output that comes after the exit, while the pipes are still open, is still read.
  const late: string[] = [];
  const drained = realProcess.start(sh('(sleep 0.3; echo late) & echo first'), {
    onStdoutLine: (line) => late.push(line),
    onStderrLine: () => undefined,
  });
  t.same(await drained.exited, { exitCode: 0, signal: null });
  t.same(late, ['first', 'late']);
});
