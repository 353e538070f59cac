// Usage, cost, model and rate limits as the adapters read them from the
// recorded output shapes of both CLIs (test/fixtures/agents/README.md), and
// the session report the ledger gets: what a CLI did not say is null, never 0.
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { claudeAdapter } from '../../src/agent/adapters/claude.js';
import { codexAdapter } from '../../src/agent/adapters/codex.js';
import { commandAdapter } from '../../src/agent/adapters/command.js';
import { sessionReport } from '../../src/drain/session-guard.js';
import type { AgentOutput, AgentResult } from '../../src/types.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/agents');
const lines = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8').split('\n').filter(Boolean);
const output = (stdoutLines: string[], extra: Partial<AgentOutput> = {}): AgentOutput => ({
  stdoutLines,
  stderrTail: '',
  exitCode: 0,
  signal: null,
  endedBy: 'exit',
  ...extra,
});
const session = (result: AgentResult) => ({
  iteration: 1,
  result,
  startedAt: Date.parse('2026-11-30T10:00:00Z'),
  endedAt: Date.parse('2026-11-30T10:01:30Z'),
  model: 'opus',
  effort: 'high',
  judged: undefined,
  role: 'implement' as const,
});
const ledgerFields = (report: ReturnType<typeof sessionReport>) => [
  report.inputTokens,
  report.outputTokens,
  report.cacheReadTokens,
  report.cacheWriteTokens,
  report.costUsd,
  report.model,
  report.outcome,
  report.rateLimited,
];

t.test(
  'claude success (documented shape): usage split for the ledger, cost, model, an "allowed" rate_limit_event ignored',
  async (t) => {
    const result = claudeAdapter.parseResult(output(lines('claude-2.1-success.documented.jsonl')));
    t.equal(result.ok, true);
    t.same(result.usage, { input: 57, output: 2210, cacheRead: 181004, cacheWrite: 9120 });
    t.equal(result.costUsd, 0.1834);
    t.equal(result.model, 'claude-sonnet-4-5-20250929');
    t.equal(result.rateLimitSeen, undefined, 'status "allowed" is information only');
    t.equal(result.inputTokens, 57 + 9120 + 181004, 'inputTokens still counts everything the model read');
    t.same(ledgerFields(sessionReport('TASK-3', 'claude', session(result))), [
      57,
      2210,
      181004,
      9120,
      0.1834,
      'claude-sonnet-4-5-20250929',
      'ok',
      false,
    ]);
  },
);

t.test('claude rate limit (documented shape): rejected rate_limit_event and a 429 result', async (t) => {
  const result = claudeAdapter.parseResult(
    output(lines('claude-2.1-rate-limited.documented.jsonl'), {
      exitCode: 1,
      endedAt: Date.parse('2026-05-12T04:00:00Z'),
    }),
  );
  t.equal(result.ok, false);
  t.equal(result.failure, 'rate-limited');
  t.equal(
    result.resetAt,
    '2026-05-12T06:00:00.000Z',
    '"resets 2pm (Asia/Shanghai)" read against the end of the session',
  );
  t.same(result.rateLimitSeen, { resetAt: new Date(1778565600 * 1000).toISOString() }, 'resetsAt is epoch seconds');
  const report = sessionReport('TASK-4', 'claude', session(result));
  t.same(ledgerFields(report), [0, 0, 0, 0, 0, 'claude-opus-4-1-20250805', 'rate-limited', true]);
});

t.test(
  "claude: a rejected rate_limit_event without a result line is a rate limit, with the event's reset",
  async (t) => {
    const [init, event] = lines('claude-2.1-rate-limited.documented.jsonl');
    const result = claudeAdapter.parseResult(output([init!, event!], { exitCode: 1 }));
    t.equal(result.failure, 'rate-limited');
    t.equal(result.resetAt, new Date(1778565600 * 1000).toISOString());
  },
);

t.test('claude: a usable result stays usable when a rejected rate_limit_event came before it', async (t) => {
  const success = lines('claude-2.1-success.documented.jsonl');
  const rejected = lines('claude-2.1-rate-limited.documented.jsonl')[1]!;
  const result = claudeAdapter.parseResult(output([...success.slice(0, 2), rejected, success[3]!]));
  t.equal(result.ok, true, 'the session is not thrown away');
  t.ok(result.rateLimitSeen, 'but the limit is seen, so new sessions wait');
});

t.test(
  'claude at --max-budget-usd (documented shape): over-budget, its cost and usage in the ledger as usual',
  async (t) => {
    const recorded = lines('claude-2.1-max-budget.documented.jsonl');
    const result = claudeAdapter.parseResult(output(recorded, { exitCode: 1 }));
    t.same(
      [result.ok, result.failure, result.detail],
      [false, 'over-budget', 'stopped at its budget: Reached maximum budget ($0.5) (error_max_budget_usd)'],
    );
    t.same(result.usage, { input: 88, output: 5120, cacheRead: 812300, cacheWrite: 30112 });
    t.equal(result.costUsd, 0.5127);
    t.same(ledgerFields(sessionReport('TASK-7', 'claude', session(result))), [
      88,
      5120,
      812300,
      30112,
      0.5127,
      'claude-sonnet-4-5-20250929',
      'over-budget',
      false,
    ]);
    t.same(
      recorded.map((line) => claudeAdapter.costReported?.(line)),
      [undefined, undefined, undefined, undefined, 0.5127],
      'the runner reads a cost from the result line only',
    );
    t.equal(codexAdapter.costReported, undefined, 'codex reports no cost: nothing for the runner to read');
    t.equal(commandAdapter.costReported, undefined, 'nor does a command agent');
  },
);

t.test('claude not logged in (captured from 2.1.197): usage reported as zeros, model from init', async (t) => {
  const result = claudeAdapter.parseResult(output(lines('claude-2.1.197-not-logged-in.jsonl'), { exitCode: 1 }));
  t.equal(result.failure, 'not-logged-in');
  t.same(result.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  t.equal(result.costUsd, 0);
  t.equal(result.model, 'claude-sonnet-5');
});

t.test(
  'codex turn.completed (documented shape): input without the cached part, no cache writes and no cost (unknown)',
  async (t) => {
    const result = codexAdapter.parseResult(output(lines('codex-0.171-turn-completed.documented.jsonl')));
    t.equal(result.ok, true);
    t.same(result.usage, { input: 24763 - 24448, output: 122, cacheRead: 24448 });
    t.equal(result.costUsd, undefined);
    const report = sessionReport('TASK-9', 'codex', session(result));
    t.same(
      ledgerFields(report),
      [315, 122, 24448, null, null, 'opus', 'ok', false],
      'the model falls back to the one the runner chose',
    );
  },
);

t.test('codex usage limit (documented shape): rate limited with a relative reset', async (t) => {
  const result = codexAdapter.parseResult(
    output(lines('codex-0.171-usage-limit.documented.jsonl'), {
      exitCode: 1,
      endedAt: Date.parse('2026-11-30T10:00:00Z'),
    }),
  );
  t.equal(result.failure, 'rate-limited');
  t.equal(result.resetAt, '2026-12-03T12:11:00.000Z');
  t.equal(sessionReport('TASK-9', 'codex', session(result)).rateLimited, true);
});

t.test('codex without network (captured from 0.171), ended by the watchdog: every usage value unknown', async (t) => {
  const result = codexAdapter.parseResult(
    output(lines('codex-0.171-no-network.jsonl'), { exitCode: null, signal: 'SIGKILL', endedBy: 'wall-clock' }),
  );
  t.equal(result.failure, 'wall-clock');
  t.equal(result.usage, undefined);
  t.same(ledgerFields(sessionReport('TASK-1', 'codex', session(result))), [
    null,
    null,
    null,
    null,
    null,
    'opus',
    'wall-clock',
    false,
  ]);
});

t.test('a command agent reports nothing: all unknown, never zero', async (t) => {
  const result = commandAdapter.parseResult(output(['done']));
  t.same(ledgerFields(sessionReport('TASK-2', 'command', session(result))), [
    null,
    null,
    null,
    null,
    null,
    'opus',
    'ok',
    false,
  ]);
});
