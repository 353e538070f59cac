// Twenty processes race for one lock through the real edge, released at
// once by a barrier: exactly one holds it, for a free lock, for a lock whose
// holder was killed (-9) holding it, and for a lock whose taker died before
// it could record itself. Each holder also proves it is alone (an O_EXCL file).
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, utimesSync, readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/temp.js';
import { PROJECT_ROOT, waitFor } from '../helpers/drain-fixture.js';

const RACER = path.join(PROJECT_ROOT, 'dist/test/helpers/lock-racer.js');
const CONTENDERS = 20;
const ROUNDS = 1;
/** Long enough for every contender to try while the winner still holds it. */
const HOLD_MS = 4000;

interface Outcome {
  readonly pid: number;
  readonly attemptAt: number;
  readonly acquired: boolean;
  readonly alone?: boolean;
  readonly busy?: boolean;
  readonly error?: string;
}

function racer(
  lock: string,
  inside: string,
  barrier: string,
  holdMs: number,
): { pid: number; ready: () => boolean; done: Promise<Outcome> } {
  const child = spawn(process.execPath, [RACER, lock, inside, barrier, String(holdMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const done = new Promise<Outcome>((resolve, reject) =>
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out.replace(/^ready\n/, '').trim()) as Outcome);
      } catch {
        reject(new Error(`racer exited ${code} without an outcome: ${err.slice(-500)}`));
      }
    }),
  );
  return { pid: child.pid!, ready: () => out.startsWith('ready\n'), done };
}

async function race(t: Test, lock: string, inside: string): Promise<void> {
  const barrier = `${inside}.go`;
  rmSync(barrier, { force: true });
  const racers = Array.from({ length: CONTENDERS }, () => racer(lock, inside, barrier, HOLD_MS));
  await waitFor(() => racers.every((one) => one.ready()), 60_000, 'every contender to load');
  const released = Date.now();
  writeFileSync(barrier, '');
  const outcomes = await Promise.all(racers.map((one) => one.done));
  const late = outcomes.filter((outcome) => outcome.attemptAt >= released + HOLD_MS);
  t.same(late, [], 'every contender tried while the first holder still held the lock (else the round proves nothing)');
  const holders = outcomes.filter((outcome) => outcome.acquired);
  t.equal(holders.length, 1, `exactly one holder (${holders.length} of ${CONTENDERS})`);
  t.ok(
    holders.every((holder) => holder.alone),
    'and it was alone while it held the lock',
  );
  const others = outcomes.filter((outcome) => !outcome.acquired);
  t.ok(
    others.every((outcome) => outcome.busy),
    `every other contender was told busy (${others
      .filter((o) => !o.busy)
      .map((o) => o.error)
      .join('; ')})`,
  );
  t.notOk(existsSync(lock), 'the lock is gone once its holder released it');
}

t.test('a free lock: one holder', async (t) => {
  const dir = tempDir(t, 'agent-runner-lock-race-');
  for (let round = 0; round < ROUNDS; round++)
    await t.test(`round ${round + 1}`, (t) => race(t, path.join(dir, 'drain.lock'), path.join(dir, 'inside')));
});

t.test('a lock whose holder was killed holding it: one holder takes it over', async (t) => {
  const dir = tempDir(t, 'agent-runner-lock-race-');
  const lock = path.join(dir, 'drain.lock');
  for (let round = 0; round < ROUNDS; round++) {
    await t.test(`round ${round + 1}`, async (t) => {
      const go = path.join(dir, 'victim-go');
      writeFileSync(go, '');
      const holder = racer(lock, path.join(dir, 'victim-inside'), go, 600_000);
      await waitFor(() => existsSync(`${lock}.holder.json`), 20_000, 'the first holder to record itself');
      t.equal(
        JSON.parse(readFileSync(`${lock}.holder.json`, 'utf8')).pid,
        holder.pid,
        'the planted holder recorded itself',
      );
      process.kill(holder.pid, 'SIGKILL');
      await holder.done.catch(() => undefined);
      await race(t, lock, path.join(dir, 'inside'));
    });
  }
});

t.test('a lock whose taker died before recording itself: one holder once its heartbeat is stale', async (t) => {
  const dir = tempDir(t, 'agent-runner-lock-race-');
  const lock = path.join(dir, 'drain.lock');
  for (let round = 0; round < ROUNDS; round++) {
    await t.test(`round ${round + 1}`, async (t) => {
      mkdirSync(lock);
      const old = new Date(Date.now() - 120_000);
      utimesSync(lock, old, old);
      await race(t, lock, path.join(dir, 'inside'));
    });
  }
});

t.test('a recorded-less lock with a fresh heartbeat is a live taker: busy, never broken', async (t) => {
  const dir = tempDir(t, 'agent-runner-lock-race-');
  const lock = path.join(dir, 'drain.lock');
  mkdirSync(lock);
  const go = path.join(dir, 'go');
  writeFileSync(go, '');
  const outcome = await racer(lock, path.join(dir, 'inside'), go, 0).done;
  t.equal(outcome.acquired, false, 'not taken');
  t.match(outcome.error ?? '', /has not recorded itself yet/, 'busy, naming why');
  t.ok(existsSync(lock), 'the lock is still there');
});
