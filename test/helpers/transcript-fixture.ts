// Transcripts as run-task writes them, built around the recorded claude and
// codex streams of test/fixtures/agents: a run-start, then per recording a
// session-start, every recorded line as an `output` event and a
// session-end, then the run-end.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A recorded stream's lines (test/fixtures/agents/NAME). */
export function recordedStream(name: string): string[] {
  return readFileSync(path.join(ROOT, 'test/fixtures/agents', name), 'utf8')
    .split('\n')
    .filter(Boolean);
}

export const at = (second: number) => `2026-01-01T10:00:${String(second).padStart(2, '0')}.000Z`;

export const transcriptEvent = (second: number, event: Record<string, unknown>) =>
  `${JSON.stringify({ time: at(second), ...event })}\n`;

/** A whole transcript of `assistant` whose sessions print the given recorded streams. */
export function recordedTranscript(assistant: string, recordings: readonly string[]): string {
  let text = transcriptEvent(0, {
    event: 'run-start',
    runId: '20260101T100000Z-aa',
    taskId: 'TASK-1',
    assistant,
    role: 'implement',
    model: 'm1',
    modelSource: 'config',
    effort: 'high',
    effortSource: 'label',
  });
  recordings.forEach((name, i) => {
    text += transcriptEvent(1, { event: 'session-start', iteration: i + 1, program: assistant, args: ['-p'] });
    for (const line of recordedStream(name)) text += transcriptEvent(2, { event: 'output', stream: 'stdout', line });
    text += transcriptEvent(3, {
      event: 'session-end',
      iteration: i + 1,
      exitCode: 0,
      signal: null,
      endedBy: 'exit',
      durationMs: 1000,
      result: { ok: true, inputTokens: 57, outputTokens: 2210, costUsd: 0.1834 },
    });
  });
  return text + transcriptEvent(4, { event: 'run-end', outcome: { kind: 'done' } });
}
