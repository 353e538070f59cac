// One contender in a lock race, run as its own process by the race tests:
// says "ready" once loaded, waits for the barrier (a file the test creates
// once every contender is ready),
// tries the lock once through the real edge and the one lock rule, and while
// holding it proves it is alone: it creates `inside` with O_EXCL (a second
// holder fails there) and removes it on release. Prints one JSON line.
//   node lock-racer.js LOCK INSIDE BARRIER_FILE HOLD_MS
import { openSync, closeSync, rmSync, existsSync } from 'node:fs';
import { acquireLock } from '../../src/lock.js';
import { realLocks } from '../../src/io/lock.js';
import { realClock, realProcess } from '../../src/io/real-ports.js';
import { BusyError } from '../../src/errors.js';

const [lockPath, inside, barrier, holdText] = process.argv.slice(2) as [string, string, string, string];

async function main(): Promise<void> {
  process.stdout.write('ready\n');
  while (!existsSync(barrier)) await new Promise((resolve) => setTimeout(resolve, 2));
  const attemptAt = Date.now();
  let lock;
  try {
    lock = await acquireLock({ locks: realLocks, process: realProcess, clock: realClock }, lockPath, {
      command: 'racer',
      wait: false,
      what: 'the race lock',
    });
  } catch (error) {
    process.stdout.write(
      `${JSON.stringify({ pid: process.pid, attemptAt, acquired: false, busy: error instanceof BusyError, error: (error as Error).message })}\n`,
    );
    return;
  }
  let alone = true;
  try {
    closeSync(openSync(inside, 'wx'));
  } catch {
    alone = false;
  }
  await new Promise((resolve) => setTimeout(resolve, Number(holdText)));
  if (alone) rmSync(inside, { force: true });
  await lock.release();
  process.stdout.write(`${JSON.stringify({ pid: process.pid, attemptAt, acquired: true, alone })}\n`);
}

void main();
