// Builder fakes for the drain's and staging's verdicts: the facts each
// verdict takes, with defaults a table row overrides.
import type { AgentFailure } from '../../src/types.js';
import type { AgentFacts, WorkOutcome } from '../../src/drain/verdict/after-agent.js';
import type { GateResult, IntegrationOutcome } from '../../src/drain/verdict/after-integration.js';
import type { AttemptRecord } from '../../src/drain/types.js';
import type { BaseFacts, PromoteFacts } from '../../src/staging/verdict.js';

/** What the worker saw: an agent that failed with the adapter's typed failure. */
export function agentFailed(failure: AgentFailure, detail: string): { outcome: WorkOutcome; failure: AgentFailure } {
  return { outcome: { kind: 'agent-failed', reason: `${failure}: ${detail}` }, failure };
}

export function anAgentEnd(fields: Partial<AgentFacts> = {}): AgentFacts {
  return {
    outcome: { kind: 'done' },
    failure: undefined,
    stopped: false,
    attempts: undefined,
    maxAttempts: 2,
    ...fields,
  };
}

export function attemptsSoFar(failures: number, conflictRetried = false): AttemptRecord {
  return { failures, lastReason: 'earlier', conflictRetried };
}

export function aGate(fields: Partial<GateResult> = {}): GateResult {
  return { ok: true, detail: 'gates passed', tail: '', durationMs: 1200, ...fields };
}

export const integration = {
  landed: (commit = 'c0ffee'): IntegrationOutcome => ({ kind: 'landed', commit, gate: aGate() }),
  alreadyLanded: (commit = 'c0ffee'): IntegrationOutcome => ({ kind: 'already-landed', commit }),
  conflict: (...files: string[]): IntegrationOutcome => ({ kind: 'conflict', files }),
  protectedPaths: (reason = 'changes .agent/'): IntegrationOutcome => ({
    kind: 'protected-paths',
    paths: ['.agent/gates.sh'],
    reason,
  }),
  red: (gate: Partial<GateResult> = {}): IntegrationOutcome => ({
    kind: 'gate-failed',
    gate: aGate({ ok: false, detail: 'gates exited 1', ...gate }),
  }),
};

export function baseFacts(fields: Partial<BaseFacts> = {}): BaseFacts {
  return {
    mode: 'accumulate',
    created: false,
    stagingHead: 'S',
    baseHead: 'B',
    unpromoted: 0,
    baseContained: true,
    force: false,
    baseName: 'origin/main',
    stagingDir: '/w/.repo.worktrees/staging',
    ...fields,
  };
}

export function promoteFacts(fields: Partial<PromoteFacts> = {}): PromoteFacts {
  return {
    workspace: '/w/repo',
    baseBranch: 'main',
    staging: 'S',
    localBase: 'B',
    remoteBase: 'B',
    bases: [
      { name: 'origin/main', sha: 'B', contained: true },
      { name: 'main', sha: 'B', contained: true },
    ],
    checkout: { onBase: false, dirty: false },
    ...fields,
  };
}
