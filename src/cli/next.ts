// agent-runner next: the ready tasks in the order a drain would take them,
// then every other task with all the reasons it is not ready. Reads only.
// Once a drain has made auto/work, the board is read as the drain and
// `fleet` read it (auto/work, plus tasks filed on the base it has not merged
// yet, from git objects): the checkout may still list tasks that are Done on
// staging. Before that, the checkout's board is the drain's starting point.
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import type { Board, Readiness } from '../types.js';
import type { Ports } from '../ports.js';
import { readRepoConfig } from '../repo/read-config.js';
import { labelCheckFor } from '../repo/escalation.js';
import { BoardSnapshot } from '../control/repo-view/board.js';
import { STAGING_BRANCH } from '../staging/names.js';
import { EXIT, PathError } from '../errors.js';
import { checkWorkspace } from '../repo/workspace.js';
import { readBoard } from '../board/read.js';
import { assessReadiness, describeReason } from '../board/readiness.js';
import { routeLifecycle } from './lifecycle-route.js';
import { lifecycleChoice, targetFlags } from './target.js';
import { withExamples } from './help.js';

interface NextOptions {
  workspace?: string;
  repo?: string;
  json?: boolean;
}

const EXAMPLES = [
  ['agent-runner next --repo web', "as root: a registered repo's board, read as its user"],
  ['agent-runner next --workspace . --json', 'your own checkout, as JSON'],
] as const;

export function define(command: Command, context: CliContext, setExit: (code: number) => void): void {
  withExamples(
    targetFlags(command, 'the git checkout whose backlog/ holds the tasks (default: the current directory)'),
    EXAMPLES,
  )
    .option('--json', 'print the result as JSON')
    .action(async (options: NextOptions) => {
      const choice = lifecycleChoice('next', options);
      // --repo: as root, read as the repo's user, as status does (its config file is the user's to write). A checkout
      // given by path is read in place, as before: the board comes from git objects, as data (control/repo-view).
      let workspaceOption = choice.workspace;
      if (choice.repo !== undefined) {
        const route = await routeLifecycle(context, choice, ['next', ...(options.json ? ['--json'] : [])]);
        if (route.kind === 'ran-as-user') return setExit(route.exitCode);
        workspaceOption = route.workspace;
      }
      const workspace = await checkWorkspace(context.ports.fs, context.cwd, workspaceOption);
      // A broken .agent/config.json is orchestrate's to report: the base is then main, any assistant's efforts count.
      const config = await readRepoConfig(context.ports.fs, workspace).then(
        (validation) => validation.config,
        () => undefined,
      );
      const { board, source } = await drainBoard(context.ports, workspace, config?.baseBranch ?? 'main');
      const readiness = assessReadiness(board, labelCheckFor(config?.assistant));
      context.out(
        options.json ? `${JSON.stringify(nextJson(readiness, source), null, 2)}\n` : renderNext(readiness, source),
      );
      setExit(EXIT.ok);
    });
}

/** The board a drain would take tasks from, and where it was read: `auto/work` (`+ origin/main`), or `checkout`. */
async function drainBoard(
  ports: Pick<Ports, 'fs' | 'process'>,
  workspace: string,
  baseBranch: string,
): Promise<{ board: Board; source: string }> {
  // git cannot read the objects (no commit yet, say): the checkout's board is the drain's starting point. A board that
  // is not a folder on auto/work or the base is the drain's error too: said, not read past.
  const view = await new BoardSnapshot(ports.process, workspace, baseBranch).view().catch((error: unknown) => {
    if (error instanceof PathError) throw error;
    return undefined;
  });
  if (view?.refs.includes(STAGING_BRANCH)) return { board: view.board, source: view.refs.join(' + ') };
  return { board: await readBoard(ports.fs, workspace), source: 'checkout' };
}

/** The stable --json shape. */
export interface NextJson {
  /**
   * Where the board was read: `auto/work` (with `+ origin/<base>` when tasks filed there are not merged yet), or
   * `checkout`.
   */
  source: string;
  ready: { id: string; title: string; priority: string | null; labels: string[] }[];
  notReady: { id: string | null; file: string; title: string; reasons: string[] }[];
}

function nextJson(readiness: Readiness, source: string): NextJson {
  return {
    source,
    ready: readiness.ready.map((task) => ({
      id: task.id,
      title: task.title,
      priority: task.priority ?? null,
      labels: [...task.labels],
    })),
    notReady: readiness.notReady.map((entry) => ({
      id: entry.id || null,
      file: entry.file,
      title: entry.title,
      reasons: entry.reasons.map(describeReason),
    })),
  };
}

/** The human table: for people, may change. */
function renderNext(readiness: Readiness, source: string): string {
  const lines: string[] = source === 'checkout' ? [] : [`Board of ${source}:`];
  if (!readiness.ready.length && !readiness.notReady.length)
    return `${lines.map((line) => `${line}\n`).join('')}No tasks on the board.\n`;
  lines.push(`Ready (${readiness.ready.length}):`);
  if (!readiness.ready.length) lines.push('  none');
  lines.push(
    ...table(
      readiness.ready.map((task) => [
        task.id,
        task.priority ?? '-',
        task.title,
        task.labels.length ? `[${task.labels.join(', ')}]` : '',
      ]),
    ),
  );
  if (readiness.notReady.length) {
    lines.push('', `Not ready (${readiness.notReady.length}):`);
    lines.push(
      ...table(
        readiness.notReady.map((entry) => [
          entry.id || '-',
          entry.title || entry.file,
          entry.reasons.map(describeReason).join('; '),
        ]),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

function table(rows: readonly string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) =>
    `  ${row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ')}`.trimEnd(),
  );
}
