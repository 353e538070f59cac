// What the drain makes of one Job's end, and of a line of its pod's log. A Job's outcome becomes the outcome the
// host's worker would have reached (complete: the result is taken through the hand-off checks; the deadline: stalled;
// a failure: agent-failed with its reason); an eviction is run again at once, uncharged, up to a bound. A log line the
// worker printed as a transcript event is written as that event, anything else as an `output` line. Pure.
import type { WorkOutcome } from '../../../src/drain/verdict/index.js';
import type { JobOutcome } from '../jobs/verdict.js';
import { podWorkerEnding } from '../worker/exit-codes.js';

/** A Job's end as the attempt runtime reports it (jobs/attempt.ts FinalOutcome). */
export type JobEnd =
  Exclude<JobOutcome, { kind: 'running' }> | { readonly kind: 'stopped'; readonly how: 'stop' | 'kill' };

export type AfterJob =
  /** The worker pushed its result: take it through the hand-off checks. */
  | { readonly kind: 'take-result' }
  /** The cluster took the pod away: a new Job, no attempt charged. */
  | { readonly kind: 'again'; readonly reason: string }
  | { readonly kind: 'ended'; readonly outcome: WorkOutcome };

/**
 * Pure: a failed Job as the host's worker would have ended the task: the pod worker's exit code says a Blocked task
 * (the agent's reason, from the termination message the worker wrote as "blocked: REASON") or a failed setup step;
 * anything else is a failed attempt with the Job's words.
 */
function failedOutcome(end: Extract<JobEnd, { kind: 'failed' }>): WorkOutcome {
  const ending = end.agentExit === undefined ? undefined : podWorkerEnding(end.agentExit.code);
  const told = (prefix: string) => {
    const message = end.agentExit?.message ?? '';
    return message.startsWith(`${prefix}: `) ? message.slice(prefix.length + 2) : end.reason;
  };
  if (ending === 'blocked') return { kind: 'blocked', reason: told('blocked') };
  if (ending === 'setupFailed') return { kind: 'setup-failed', reason: told('setupFailed') };
  return { kind: 'agent-failed', reason: end.reason };
}

/** Pure: what follows a Job's end, given the evictions this attempt already met. */
export function afterJob(end: JobEnd, evictions: number, maxEvictions: number): AfterJob {
  switch (end.kind) {
    case 'complete':
      return { kind: 'take-result' };
    case 'stalled':
      return { kind: 'ended', outcome: { kind: 'stalled', reason: end.reason } };
    case 'failed':
      return { kind: 'ended', outcome: failedOutcome(end) };
    case 'evicted':
      return evictions < maxEvictions
        ? { kind: 'again', reason: end.reason }
        : {
            kind: 'ended',
            outcome: {
              kind: 'agent-failed',
              reason: `evicted ${evictions + 1} times in a row (the cluster keeps taking its pod away); last: ${end.reason}`,
            },
          };
    case 'stopped':
      return {
        kind: 'ended',
        outcome: { kind: 'unfinished', reason: `the drain ${end.how === 'kill' ? 'killed' : 'stopped'} its Job` },
      };
  }
}

/** The events a task worker prints that the transcript knows (control/transcripts/render.ts). */
const WORKER_EVENTS: ReadonlySet<string> = new Set([
  'run-start',
  'session-start',
  'output',
  'session-end',
  'session-again',
  'run-end',
]);

/** A line longer than this is not read as an event: it is written as it is, an output line. */
const EVENT_LINE_MAX = 64 * 1024;

/** RFC 3339 with milliseconds, from the container runtime's nanoseconds. */
function isoOf(at: bigint): string {
  return new Date(Number(at / 1_000_000n)).toISOString();
}

/**
 * Pure: the transcript event for a line of the worker's log at `at` (its time as the container runtime stamped it):
 * a JSON object naming a known event is that event, with the runtime's time and the Job that printed it; anything
 * else is an `output` line of the pod.
 */
export function podLineEvent(line: string, at: bigint, job: string): Record<string, unknown> {
  const time = isoOf(at);
  if (line.length <= EVENT_LINE_MAX && line.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const event = (parsed as Record<string, unknown>).event;
      if (typeof event === 'string' && WORKER_EVENTS.has(event)) {
        // The worker's own time is the agent's word; the runtime's stamp is not.
        const { time: _ignored, ...rest } = parsed as Record<string, unknown>;
        return { ...rest, time, job };
      }
    }
  }
  return { event: 'output', stream: 'pod', job, line, time };
}

/** The runner's own note in the transcript: what it did with the cluster. */
export function runnerNote(line: string): Record<string, unknown> {
  return { event: 'output', stream: 'kubernetes', line };
}
