// Gate for system tests (real users, nftables, Squid, systemd). In CI
// (CI=true) a missing prerequisite is a failure: these tests must run there.
// Elsewhere they skip, loudly, with the reason.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import type { Test } from 'tap';

/**
 * Skips a subtest with its reason, and tells the test summary why
 * (scripts/run-tests.mjs prints every reason after the counts).
 */
export function skipWithReason(t: Test, name: string, reason: string): void {
  const log = process.env.AGENT_RUNNER_TEST_SKIP_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ test: `${t.name} > ${name}`, reason })}\n`);
  t.test(name, { skip: reason }, async () => undefined);
}

export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v "$1"`, 'sh', tool], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Returns true when the system test may run. Otherwise fails it (in CI) or
 * skips it with the reason (elsewhere), and returns false.
 */
export function systemTestMayRun(t: Test, tools: readonly string[] = []): boolean {
  const reasons: string[] = [];
  if (process.getuid?.() !== 0) reasons.push('needs root');
  const missing = missingTools(tools);
  if (missing.length) reasons.push(`missing ${missing.join(', ')} (run provision/install-packages.sh)`);
  if (!reasons.length) return true;
  const reason = `system test cannot run: ${reasons.join('; ')}`;
  if (process.env.CI === 'true') {
    t.fail(`${reason} (CI must run system tests)`);
  } else {
    process.stderr.write(`SKIP ${t.name}: ${reason}\n`);
    skipWithReason(t, reason, reason);
  }
  return false;
}
