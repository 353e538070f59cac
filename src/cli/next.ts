// agent-runner next: the ready tasks in the order a drain would take them,
// then every other task with all the reasons it is not ready. Reads only.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { Readiness } from '../types.js';
import { EXIT } from '../errors.js';
import { checkWorkspace } from '../repo/workspace.js';
import { readBoard } from '../board/read.js';
import { assessReadiness, describeReason } from '../board/readiness.js';

interface NextOptions {
  workspace?: string;
  json?: boolean;
}

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  command
    .option('--workspace <dir>', 'the git checkout whose backlog/ holds the tasks (default: the current directory)')
    .option('--json', 'print the result as JSON')
    .action(async (options: NextOptions) => {
      const workspace = await checkWorkspace(context.ports.fs, context.cwd, options.workspace);
      const readiness = assessReadiness(await readBoard(context.ports.fs, workspace));
      context.out(options.json ? `${JSON.stringify(nextJson(readiness), null, 2)}\n` : renderNext(readiness));
      setExit(EXIT.ok);
    });
}

/** The stable --json shape. */
export interface NextJson {
  ready: { id: string; title: string; priority: string | null; labels: string[] }[];
  notReady: { id: string | null; file: string; title: string; reasons: string[] }[];
}

function nextJson(readiness: Readiness): NextJson {
  return {
    ready: readiness.ready.map((task) => ({ id: task.id, title: task.title, priority: task.priority ?? null, labels: [...task.labels] })),
    notReady: readiness.notReady.map((entry) => ({
      id: entry.id || null,
      file: entry.file,
      title: entry.title,
      reasons: entry.reasons.map(describeReason),
    })),
  };
}

/** The human table: for people, may change. */
function renderNext(readiness: Readiness): string {
  const lines: string[] = [];
  if (!readiness.ready.length && !readiness.notReady.length) return 'No tasks in backlog/tasks.\n';
  lines.push(`Ready (${readiness.ready.length}):`);
  if (!readiness.ready.length) lines.push('  none');
  lines.push(
    ...table(
      readiness.ready.map((task) => [task.id, task.priority ?? '-', task.title, task.labels.length ? `[${task.labels.join(', ')}]` : '']),
    ),
  );
  if (readiness.notReady.length) {
    lines.push('', `Not ready (${readiness.notReady.length}):`);
    lines.push(...table(readiness.notReady.map((entry) => [entry.id || '-', entry.title || entry.file, entry.reasons.map(describeReason).join('; ')])));
  }
  return `${lines.join('\n')}\n`;
}

function table(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => `  ${row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ')}`.trimEnd());
}
