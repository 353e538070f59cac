// The host's broker account (agent-runner-broker) for system tests that run at once. Tests that only need it present
// share it (useBrokerAccount: made when absent, counted under flock, removed by the last one out if a test made
// it). A test that makes and removes it itself (ownBrokerAccount) waits until no test shares it, then holds the lock
// for its whole run, so no sharer sees the account come and go under it. An account the host had before is never
// removed.
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Test } from 'tap';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';
import { createBrokerAccountCommand } from '../../backends/host/users.js';

const LOCK = '/run/agent-runner-test-broker-account.lock';
const USERS = '/run/agent-runner-test-broker-account.users';
const MADE = '/run/agent-runner-test-broker-account.made';

/** Runs `script` under the lock: $1 the account, $2 the sharers' file, $3 the made-mark, $4 this pid, then `more`. */
function locked(script: string, more: readonly string[] = []): string {
  const args = [BROKER_ACCOUNT, USERS, MADE, String(process.pid), ...more];
  return execFileSync('flock', [LOCK, 'sh', '-c', script, 'sh', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The broker account's uid; the account stays until the last test using it ends. */
export function useBrokerAccount(t: Test): number {
  // Made as provision host makes it, so a provision host beside it finds nothing to change.
  locked(
    'a=$1 users=$2 made=$3 pid=$4; shift 4; getent passwd "$a" >/dev/null || { useradd "$@" && touch "$made"; }; echo "$pid" >> "$users"',
    createBrokerAccountCommand(BROKER_ACCOUNT).args,
  );
  t.teardown(() =>
    locked('sed -i "/^$4\\$/d" "$2"; if [ ! -s "$2" ] && [ -e "$3" ]; then userdel "$1"; rm -f "$3" "$2"; fi'),
  );
  return Number(execFileSync('id', ['-u', BROKER_ACCOUNT], { encoding: 'utf8' }).trim());
}

/**
 * Waits (up to `waitMs`) until no test shares the account, then holds the lock until the returned release is called
 * (call it after the account is removed). Resolves to undefined when the account is not free for the taking.
 */
export async function ownBrokerAccount(waitMs = 600_000): Promise<(() => Promise<void>) | undefined> {
  const end = Date.now() + waitMs;
  for (;;) {
    const holder = spawn('flock', [LOCK, 'sh', '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    await new Promise<void>((resolve) => createInterface({ input: holder.stdout! }).once('line', () => resolve()));
    const release = () =>
      new Promise<void>((resolve) => {
        holder.once('exit', () => resolve());
        holder.stdin!.end();
      });
    const shared = execFileSync('sh', ['-c', 'test -s "$1" && echo yes || echo no', 'sh', USERS], {
      encoding: 'utf8',
    }).trim();
    if (shared === 'no') return release;
    await release();
    if (Date.now() > end) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
