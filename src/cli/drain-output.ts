// How a drain shows itself: progress lines on stderr while it runs, and the
// summary table at the end.
import { printableLine } from '../printable.js';
import type { CliContext } from './context.js';
import type { DrainEvent, DrainSummary } from '../drain/types.js';
import { STAGING_BRANCH } from '../staging/names.js';

export function progressPrinter(
  context: Pick<CliContext, 'err'>,
  format: 'human' | 'json',
): (event: DrainEvent) => void {
  if (format === 'json') return (event) => context.err(`${JSON.stringify(event)}\n`);
  return (event) => context.err(`${printableLine(describeEvent(event))}\n`);
}

function describeEvent(event: DrainEvent): string {
  const clock = event.time.slice(11, 19);
  const task = 'taskId' in event ? `${event.taskId} ` : '';
  const seconds = 'durationMs' in event ? ` (${(event.durationMs / 1000).toFixed(1)}s)` : '';
  switch (event.event) {
    case 'staging-ready':
      return `${clock} staging ${STAGING_BRANCH} at ${event.head.slice(0, 10)}${event.created ? ' (created)' : event.mergedBase ? ' (base merged in)' : event.reset ? ' (reset to base)' : ''}`;
    case 'task-started':
      return `${clock} ${task}started: ${event.title}${event.retry ? ` (retry: ${event.retry})` : ''}`;
    case 'task-landed':
      return `${clock} ${task}landed${seconds}${event.commit ? ` as ${event.commit.slice(0, 10)}` : ''}`;
    case 'task-retrying':
      return `${clock} ${task}retrying: ${event.reason}`;
    case 'task-reviewed':
      return `${clock} ${task}review ${event.verdict === 'approved' ? event.detail : `${event.verdict}: ${event.detail}`}`;
    case 'gate-run':
      return `${clock} gate run ${event.gateRun} ${event.ok ? 'green' : 'red'}${seconds} over ${event.tasks.join(' ')}`;
    case 'drain-finished':
      return `${clock} drain ${event.outcome}${event.reason ? `: ${event.reason}` : ''}`;
    case 'rate-limit-wait':
      return `${clock} ${task}rate limited; no new ${event.assistant} session until ${event.until.slice(11, 16)} UTC (${event.detail})`;
    case 'recovered':
    case 'budget-reached':
    case 'review-setup':
    case 'stopping':
    case 'published':
    case 'publish-skipped':
    case 'staging-moved':
      return `${clock} ${event.event}${event.detail ? `: ${event.detail}` : ''}`;
    default:
      return `${clock} ${task}${event.event.replace(/^task-/, '')}${seconds}${event.reason ? `: ${event.reason}` : ''}`;
  }
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** A plain table: task, outcome, reason, time. */
export function renderTaskTable(tasks: DrainSummary['tasks']): string {
  if (!tasks.length) return '';
  const idWidth = Math.max(4, ...tasks.map((task) => task.id.length));
  const outcomeWidth = Math.max(7, ...tasks.map((task) => task.outcome.length));
  const lines = [`${pad('TASK', idWidth)}  ${pad('OUTCOME', outcomeWidth)}  ${pad('TIME', 7)}  REASON`];
  for (const task of tasks) {
    // A reason only: a landed task has none, and its title is not one.
    const reason = printableLine(task.reason ?? '-').replace(/\s+/g, ' ');
    lines.push(
      `${pad(printableLine(task.id), idWidth)}  ${pad(task.outcome, outcomeWidth)}  ${pad(`${(task.durationMs / 1000).toFixed(1)}s`, 7)}  ${reason.length > 100 ? `${reason.slice(0, 97)}...` : reason}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function renderSummary(summary: DrainSummary): string {
  const gates = summary.gateRuns ? `; ${summary.gateRuns} gate run(s)` : '';
  const head = `drain ${printableLine(summary.runId)}: ${summary.outcome}${summary.failure ? ` (${printableLine(summary.failure)})` : ''}; ${STAGING_BRANCH} ${summary.staging.head.slice(0, 10) || '-'}${summary.pushed ? ', pushed' : ''}${gates}\n`;
  return head + (summary.note ? `${printableLine(summary.note)}\n` : '') + renderTaskTable(summary.tasks);
}
