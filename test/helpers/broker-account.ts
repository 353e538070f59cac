// The host's broker account (agent-runner-broker) for system tests: made when absent, shared by the tests that run
// at once (a count under flock), and removed by the last one out if a test made it. An account the host had before
// is never removed.
import { execFileSync } from 'node:child_process';
import type { Test } from 'tap';
import { BROKER_ACCOUNT } from '../../src/control/broker/index.js';

const LOCK = '/run/agent-runner-test-broker-account.lock';
const USERS = '/run/agent-runner-test-broker-account.users';
const MADE = '/run/agent-runner-test-broker-account.made';

function locked(script: string): void {
  execFileSync('flock', [LOCK, 'sh', '-c', script, 'sh', BROKER_ACCOUNT, USERS, MADE, String(process.pid)], {
    stdio: 'pipe',
  });
}

/** The broker account's uid; the account stays until the last test using it ends. */
export function useBrokerAccount(t: Test): number {
  locked(
    'getent passwd "$1" >/dev/null || { useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$1" && touch "$3"; }; echo "$4" >> "$2"',
  );
  t.teardown(() =>
    locked('sed -i "/^$4\\$/d" "$2"; if [ ! -s "$2" ] && [ -e "$3" ]; then userdel "$1"; rm -f "$3" "$2"; fi'),
  );
  return Number(execFileSync('id', ['-u', BROKER_ACCOUNT], { encoding: 'utf8' }).trim());
}
