// A metered response as the broker seals it, for tests that need one: every field set, any of them replaced.
import type { UsageRecord } from '../../src/broker/types.js';

export const usageRecord = (fields: Partial<UsageRecord> = {}): UsageRecord => ({
  v: 1,
  repo: 'web',
  run: 'run-1',
  task: 'TASK-1',
  session: null,
  provider: 'anthropic',
  path: '/v1/messages',
  status: 200,
  stream: true,
  model: 'claude-sonnet-4-5',
  responseId: 'msg_1',
  inputTokens: 10,
  outputTokens: 20,
  cacheReadTokens: 30,
  cacheWriteTokens: 40,
  usage: 'read',
  startedAt: '2026-12-02T09:59:59.000Z',
  endedAt: '2026-12-02T10:00:00.000Z',
  ...fields,
});
