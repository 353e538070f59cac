import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { superviseAgent, MAX_STDOUT_LINES, type OutputStream } from '../../src/agent/supervise.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { fakeClock, fakeProcess } from '../helpers/fake-ports.js';
import type { Command } from '../../src/types.js';

const command: Command = { program: 'agent', args: ['--go'], env: { PATH: '/usr/bin' }, cwd: '/work', stdin: 'do it' };
const limits = { idleTimeoutMs: 1000, wallClockMs: 10_000, killGraceMs: 500 };
const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('a process that prints and exits is reported as ended by exit', async (t) => {
  const clock = fakeClock(1000);
  const process = fakeProcess();
  const seen: [OutputStream, string][] = [];
  const run = superviseAgent({ process, clock }, command, limits, (stream, line) => seen.push([stream, line]));
  const child = process.last();
  t.same(child.command, command, 'the command is started as given');
  clock.advance(300);
  child.stdout('one', 'two');
  child.stderr('warn');
  clock.advance(200);
  child.exit(0);
  const result = await run;
  t.same(result, {
    pid: child.pid,
    startedAt: 1000,
    endedAt: 1500,
    stdoutLines: ['one', 'two'],
    stderrTail: 'warn',
    exitCode: 0,
    signal: null,
    endedBy: 'exit',
  });
  t.same(seen, [
    ['stdout', 'one'],
    ['stdout', 'two'],
    ['stderr', 'warn'],
  ]);
  t.same(child.signals, ['SIGKILL'], 'the group is swept after the leader exits');
  t.equal(clock.pendingTimers(), 0, 'no timer is left behind');
});

t.test('silence ends the run: SIGTERM, and the process dies of it', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess();
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  const child = process.last();
  clock.advance(999);
  t.same(child.signals, [], 'not yet idle');
  clock.advance(1);
  t.same(child.signals, ['SIGTERM']);
  const result = await run;
  t.equal(result.endedBy, 'idle-timeout');
  t.equal(result.signal, 'SIGTERM');
  t.equal(result.exitCode, null);
  t.equal(result.endedAt, 1000);
});

t.test('every output line, on either stream, resets the idle timer', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess();
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  const child = process.last();
  for (let i = 0; i < 5; i++) {
    clock.advance(900);
    if (i % 2) child.stdout(`line ${i}`);
    else child.stderr(`err ${i}`);
  }
  t.same(child.signals, [], 'alive at 4.5 s because it kept talking');
  clock.advance(1000);
  t.same(child.signals, ['SIGTERM']);
  const result = await run;
  t.equal(result.endedBy, 'idle-timeout');
  t.equal(result.endedAt, 5500);
  t.same(result.stdoutLines, ['line 1', 'line 3']);
  t.equal(result.stderrTail, 'err 0\nerr 2\nerr 4');
});

t.test('the wall clock ends a chatty run', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess();
  const run = superviseAgent({ process, clock }, command, { ...limits, wallClockMs: 3000 }, () => undefined);
  const child = process.last();
  for (let i = 0; i < 10 && !child.exitedYet; i++) {
    clock.advance(500);
    child.stdout(`tick ${i}`);
  }
  const result = await run;
  t.equal(result.endedBy, 'wall-clock');
  t.equal(result.endedAt, 3000);
  t.same(child.signals.slice(0, 1), ['SIGTERM']);
});

t.test('a process that ignores SIGTERM gets SIGKILL after the grace period', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess({ onSignal: (child, signal) => signal === 'SIGKILL' && child.exit(null, 'SIGKILL') });
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  const child = process.last();
  clock.advance(1000);
  t.same(child.signals, ['SIGTERM']);
  child.stdout('still here');
  clock.advance(499);
  t.same(child.signals, ['SIGTERM'], 'output during the grace period does not restart the watchdog');
  clock.advance(1);
  t.same(child.signals, ['SIGTERM', 'SIGKILL']);
  const result = await run;
  t.equal(result.endedBy, 'idle-timeout');
  t.equal(result.signal, 'SIGKILL');
  t.equal(result.endedAt, 1500);
  t.same(result.stdoutLines, ['still here']);
});

t.test('a process that exits during the grace period is not killed again by the timer', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess({ onSignal: () => undefined });
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  const child = process.last();
  clock.advance(1000);
  child.exit(143);
  const result = await run;
  t.equal(result.exitCode, 143);
  t.equal(result.endedBy, 'idle-timeout');
  clock.advance(10_000);
  t.same(child.signals, ['SIGTERM', 'SIGKILL'], 'one SIGKILL: the sweep after exit, none from the timer');
  t.equal(clock.pendingTimers(), 0);
});

t.test('only the newest stdout lines are kept; stderr keeps its tail', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess();
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  const child = process.last();
  for (let i = 0; i < MAX_STDOUT_LINES + 7; i++) child.stdout(`l${i}`);
  child.stderr('x'.repeat(70_000), 'the end');
  child.exit(0);
  const result = await run;
  t.equal(result.stdoutLines.length, MAX_STDOUT_LINES);
  t.equal(result.stdoutLines[0], 'l7');
  t.equal(result.stdoutLines[MAX_STDOUT_LINES - 1], `l${MAX_STDOUT_LINES + 6}`);
  t.equal(result.stderrTail.length, 64 * 1024);
  t.ok(result.stderrTail.endsWith('x\nthe end'), 'the tail ends with the last line');
});

t.test('a throwing line handler does not stop supervision', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess();
  const run = superviseAgent({ process, clock }, command, limits, () => {
    throw new Error('disk full');
  });
  const child = process.last();
  child.stdout('a');
  child.exit(2);
  const result = await run;
  t.same(result.stdoutLines, ['a']);
  t.equal(result.exitCode, 2);
});

t.test('output before start() returns is counted', async (t) => {
  const clock = fakeClock(0);
  const process = fakeProcess({ onStart: (child) => child.stdout('early') });
  const run = superviseAgent({ process, clock }, command, limits, () => undefined);
  process.last().exit(0);
  t.same((await run).stdoutLines, ['early']);
});

t.test(
  'a line reporting a cost at or past the budget ends the run like a watchdog: TERM to its group, KILL after the grace',
  async (t) => {
    const clock = fakeClock(0);
    const process = fakeProcess({ onSignal: () => undefined });
    const costOf = (line: string) => (line.startsWith('cost ') ? Number(line.slice(5)) : undefined);
    const run = superviseAgent({ process, clock }, command, limits, () => undefined, { maxUsd: 1.5, costOf });
    const child = process.last();
    child.stdout('working', 'cost 0.5', 'cost 1.49');
    t.same(child.signals, [], 'under the budget: nothing');
    child.stdout('cost 1.5', 'cost 2');
    t.same(child.signals, ['SIGTERM'], 'reaching the budget ends it, once');
    clock.advance(499);
    t.same(child.signals, ['SIGTERM']);
    clock.advance(1);
    t.same(child.signals, ['SIGTERM', 'SIGKILL'], 'an agent that ignores TERM is killed after the grace');
    child.exit(null, 'SIGKILL');
    const result = await run;
    t.equal(result.endedBy, 'over-budget');
    t.same(result.stdoutLines, ['working', 'cost 0.5', 'cost 1.49', 'cost 1.5', 'cost 2'], 'every line is still kept');
    t.equal(clock.pendingTimers(), 0);
  },
);

t.test('no budget, or a cost reader that reports nothing or throws: the run is not ended for cost', async (t) => {
  for (const budget of [
    undefined,
    { maxUsd: 1, costOf: () => undefined },
    {
      maxUsd: 1,
      costOf: (): number => {
        throw new Error('bad line');
      },
    },
  ]) {
    const clock = fakeClock(0);
    const process = fakeProcess();
    const run = superviseAgent({ process, clock }, command, limits, () => undefined, budget);
    const child = process.last();
    child.stdout('cost 99', '{"type":"result","total_cost_usd":99}');
    child.exit(0);
    const result = await run;
    t.equal(result.endedBy, 'exit');
    t.same(child.signals, ['SIGKILL'], 'only the sweep after the exit');
  }
});

t.test(
  'a cost line before start() returns still ends the run, with its TERM sent once the handle exists',
  async (t) => {
    const clock = fakeClock(0);
    const process = fakeProcess({ onStart: (child) => child.stdout('cost 5') });
    const run = superviseAgent({ process, clock }, command, limits, () => undefined, {
      maxUsd: 1,
      costOf: (line) => Number(line.slice(5)),
    });
    const result = await run;
    t.equal(result.endedBy, 'over-budget');
    t.equal(process.last().signals[0], 'SIGTERM');
  },
);

// ---------------------------------------------------------------- real processes

function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // field 5 (pgrp) is index 2 after the command name; zombies have state Z
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(name));
    } catch {
      // gone while reading
    }
  }
  return members;
}

t.test('real: a silent child and grandchild are both gone after an idle timeout', async (t) => {
  let pid = -1;
  t.teardown(() => {
    if (pid > 0) {
      try {
        globalThis.process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
  });
  const real: Command = {
    program: 'sh',
    args: ['-c', 'sleep 100 & sleep 100; wait'],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
  };
  const started = Date.now();
  const runPromise = superviseAgent(
    { process: realProcess, clock: realClock },
    real,
    { idleTimeoutMs: 400, wallClockMs: 20_000, killGraceMs: 1000 },
    () => undefined,
  );
  // The pid is only reported at the end; look the group up while it runs.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const shells = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((candidate) => {
      try {
        return readFileSync(`/proc/${candidate}/cmdline`, 'utf8') === 'sh\0-c\0sleep 100 & sleep 100; wait\0';
      } catch {
        return false;
      }
    });
  const mine = shells.filter((candidate) => groupMembers(candidate).length === 3);
  t.equal(mine.length, 1, 'one shell leads a group of three: sh and two sleeps');
  pid = mine[0] ?? -1;
  const result = await runPromise;
  t.equal(result.pid, pid);
  t.equal(result.endedBy, 'idle-timeout');
  t.equal(result.signal, 'SIGTERM');
  t.ok(Date.now() - started < 5000, 'ended by the watchdog, not by sleep');
  await tick();
  t.same(groupMembers(pid), [], 'nothing of the group is left in /proc');
});

t.test('real: a fast command runs to the end and its output is captured', async (t) => {
  const real: Command = {
    program: 'sh',
    args: ['-c', 'read x; echo "got $x"; echo oops >&2; exit 3'],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    stdin: 'hello\n',
  };
  const result = await superviseAgent(
    { process: realProcess, clock: realClock },
    real,
    { idleTimeoutMs: 5000, wallClockMs: 10_000, killGraceMs: 500 },
    () => undefined,
  );
  t.same(result.stdoutLines, ['got hello']);
  t.equal(result.stderrTail, 'oops');
  t.equal(result.exitCode, 3);
  t.equal(result.endedBy, 'exit');
});
