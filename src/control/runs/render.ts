// Human renderings of control-plane records. Pure; may change freely (the
// --json forms are the stable ones).
import { printableLine } from '../../printable.js';
import type { RunRecord } from './record.js';

export function renderRunHuman(record: RunRecord): string {
  const lines = [
    `run ${record.id} of ${record.repo}: ${record.outcome ?? record.status}${record.exitCode === undefined ? '' : ` (exit ${record.exitCode})`}`,
  ];
  for (const task of record.tasks ?? []) {
    lines.push(
      `  ${printableLine(task.id).padEnd(10)} ${task.outcome.padEnd(11)} ${printableLine(task.title)}${task.reason ? ` (${printableLine(task.reason)})` : ''}`,
    );
  }
  if (record.staging)
    lines.push(
      `  staging ${record.staging.base.slice(0, 10)}..${record.staging.head.slice(0, 10)}${record.pushed ? ' pushed' : ''}`,
    );
  if (record.detail) lines.push(`  ${printableLine(record.detail)}`);
  return `${lines.join('\n')}\n`;
}
