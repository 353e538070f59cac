// The dashboard's decisions, with no terminal in sight: the fleet snapshot,
// the selected repo and the time go in; padded table rows, tones (the layer
// maps them to colours), the details of the selected repo and the footer come
// out. The blessed layer only paints what this returns, so everything an
// operator reads on the screen is unit-tested here.
import { printableLine } from '../src/printable.js';
import type { Fleet, FleetRepo } from '../src/control/fleet/fleet.js';
import { STAGING_BRANCH } from '../src/staging/names.js';
import { pullRequestCell } from '../src/control/pull-request/record.js';
import { hintText, keyHints } from './keys.js';

/** What a piece of text means; the terminal layer picks the colour. */
export type Tone = 'plain' | 'ok' | 'busy' | 'warn' | 'bad' | 'muted';

export interface Cell {
  /** Already padded (or cut) to its column's width. */
  readonly text: string;
  readonly tone: Tone;
}

export interface TableRow {
  readonly name: string;
  readonly cells: readonly Cell[];
}

export interface DetailLine {
  readonly label: string;
  readonly text: string;
  readonly tone: Tone;
}

export interface RefreshStatus {
  /** When the fleet on screen was read (ms), or null before the first read. */
  readonly lastReadAt: number | null;
  /** Why the last read failed; the previous fleet stays on screen. */
  readonly error: string | null;
  readonly reading: boolean;
  readonly intervalSec: number;
}

export interface FleetView {
  readonly title: string;
  readonly header: string;
  readonly rows: readonly TableRow[];
  /** Index into rows, or -1 when there are none. */
  readonly selected: number;
  readonly details: { readonly title: string; readonly lines: readonly DetailLine[] };
  readonly footer: { readonly keys: string; readonly status: string; readonly tone: Tone };
}

/** One column of the fleet table; add a column by adding an entry to FLEET_COLUMNS. */
export interface Column {
  readonly title: string;
  /** Longer values are cut with "~" so one odd repo never breaks the layout. */
  readonly max: number;
  readonly cell: (repo: FleetRepo, drift: number) => { text: string; tone: Tone };
}

/** A running watcher rewrites its heartbeat every 15 s; a minute without one means it is stuck or gone. */
export const STALE_HEARTBEAT_SEC = 60;

const COLUMN_GAP = '  ';

export function formatAge(sec: number | null): string {
  if (sec === null) return '-';
  if (sec < 120) return `${sec}s`;
  if (sec < 7200) return `${Math.round(sec / 60)}m`;
  if (sec < 172800) return `${Math.round(sec / 3600)}h`;
  return `${Math.round(sec / 86400)}d`;
}

function watcherTone(repo: FleetRepo, heartbeatAgeSec: number | null): Tone {
  switch (repo.watcher.state) {
    case 'dead':
      return 'bad';
    case 'absent':
    case 'stopped':
      return 'muted';
    case 'starting':
    case 'stopping':
      return 'warn';
    case 'running':
      return heartbeatAgeSec !== null && heartbeatAgeSec > STALE_HEARTBEAT_SEC ? 'warn' : 'busy';
    default:
      return 'ok';
  }
}

export function outcomeTone(outcome: string): Tone {
  if (outcome === 'drained') return 'ok';
  if (outcome === 'nothing-to-do') return 'muted';
  if (outcome === 'interrupted') return 'warn';
  if (outcome === 'failed' || outcome === 'error') return 'bad';
  return 'plain';
}

/** Ages in the snapshot were true when it was read; drift (s) keeps them true while it stays on screen. */
const aged = (sec: number | null, drift: number) => (sec === null ? null : sec + drift);

/** The table's columns, left to right. */
export const FLEET_COLUMNS: readonly Column[] = [
  {
    title: 'REPO',
    max: 24,
    cell: (r) => ({ text: r.name, tone: r.errors.length ? 'bad' : r.enabled ? 'plain' : 'muted' }),
  },
  {
    title: 'ON',
    max: 6,
    cell: (r) =>
      r.paused
        ? { text: 'paused', tone: 'warn' }
        : { text: r.enabled ? 'yes' : 'no', tone: r.enabled ? 'plain' : 'muted' },
  },
  {
    title: 'WATCHER',
    max: 8,
    cell: (r, d) => ({ text: r.watcher.state, tone: watcherTone(r, aged(r.watcher.heartbeatAgeSec, d)) }),
  },
  {
    title: 'BEAT',
    max: 5,
    cell: (r, d) => {
      const age = aged(r.watcher.heartbeatAgeSec, d);
      return {
        text: formatAge(age),
        tone: r.watcher.state === 'running' && age !== null && age > STALE_HEARTBEAT_SEC ? 'warn' : 'plain',
      };
    },
  },
  {
    title: 'RUN',
    max: 28,
    cell: (r, d) =>
      r.run
        ? { text: `${formatAge(r.run.elapsedSec + d)} ${r.run.runningTasks.join(',') || '-'}`, tone: 'busy' }
        : { text: '-', tone: 'muted' },
  },
  {
    title: 'QUEUE',
    max: 7,
    cell: (r) => ({
      text: r.queue.running ? `${r.queue.queued}+${r.queue.running}` : String(r.queue.queued),
      tone: r.queue.queued ? 'busy' : 'plain',
    }),
  },
  {
    title: 'STAGING',
    max: 30,
    cell: (r) =>
      withPullRequest(
        r,
        r.staging
          ? r.staging.exists
            ? { text: `+${r.staging.ahead}/-${r.staging.behind}`, tone: r.staging.ahead ? 'ok' : 'plain' }
            : { text: 'none', tone: 'muted' }
          : { text: '?', tone: 'warn' },
      ),
  },
  {
    title: 'READY',
    max: 5,
    cell: (r) => (r.board ? { text: String(r.board.ready), tone: 'plain' } : { text: '?', tone: 'warn' }),
  },
  {
    title: 'PARKED',
    max: 6,
    cell: (r) =>
      r.board ? { text: String(r.board.parked), tone: r.board.parked ? 'warn' : 'plain' } : { text: '?', tone: 'warn' },
  },
  {
    title: 'LAST RUN',
    max: 24,
    cell: (r) =>
      r.lastRun
        ? {
            text: `${r.lastRun.outcome}${r.lastRun.landed ? ` ${r.lastRun.landed} landed` : ''}`,
            tone: outcomeTone(r.lastRun.outcome),
          }
        : { text: '-', tone: 'muted' },
  },
  {
    title: 'TODAY',
    max: 16,
    cell: (r) =>
      r.spend ? { text: r.spend.today.text, tone: r.spend.hold ? 'warn' : 'plain' } : { text: '?', tone: 'muted' },
  },
  { title: 'ERR', max: 3, cell: (r) => ({ text: String(r.errors.length), tone: r.errors.length ? 'bad' : 'muted' }) },
];

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}~` : text.padEnd(width);
}

/** Keeps the selection on the same repo across refreshes; falls back to the first one. */
export function selectedIndex(fleet: Fleet | null, selected: string | null): number {
  if (!fleet || !fleet.repos.length) return -1;
  const index = selected === null ? -1 : fleet.repos.findIndex((repo) => repo.name === selected);
  return index >= 0 ? index : 0;
}

/** The repo name after moving the selection by delta rows (clamped, no wrap-around). */
export function moveSelection(fleet: Fleet | null, selected: string | null, delta: number): string | null {
  const index = selectedIndex(fleet, selected);
  if (index < 0) return null;
  const repos = fleet!.repos;
  return repos[Math.min(repos.length - 1, Math.max(0, index + delta))]!.name;
}

export function detailLines(repo: FleetRepo, drift: number): DetailLine[] {
  const lines: DetailLine[] = [];
  const add = (label: string, text: string, tone: Tone = 'plain') => lines.push({ label, text, tone });
  add(
    'repo',
    `${repo.path}  user ${repo.user}  base ${repo.baseBranch}  schedule "${repo.schedule}"  max parallel ${repo.maxParallel}${repo.enabled ? '' : '  (disabled)'}`,
    repo.enabled ? 'plain' : 'muted',
  );

  const beat = aged(repo.watcher.heartbeatAgeSec, drift);
  const watcher: string[] = [repo.watcher.state];
  if (repo.watcher.pid !== null) watcher.push(`pid ${repo.watcher.pid}`);
  watcher.push(beat === null ? 'no heartbeat' : `heartbeat ${formatAge(beat)} ago`);
  if (repo.watcher.lastTick) watcher.push(`last tick ${repo.watcher.lastTick}`);
  add('watcher', watcher.join(', '), watcherTone(repo, beat));
  if (repo.paused)
    add('paused', `since ${repo.paused.since} by ${repo.paused.by}: nothing new starts (w resumes)`, 'warn');
  if (repo.watcher.lastError) add('skipped', `${repo.watcher.lastError.at}: ${repo.watcher.lastError.message}`, 'warn');

  if (repo.run) {
    const job = repo.run.jobId ? ` ${repo.run.jobId}` : '';
    add(
      'run',
      `${repo.run.id} by ${repo.run.trigger}${job}, running for ${formatAge(repo.run.elapsedSec + drift)} since ${repo.run.startedAt}`,
      'busy',
    );
    add('tasks', repo.run.runningTasks.join(', ') || 'none running', repo.run.runningTasks.length ? 'busy' : 'muted');
  } else {
    add('run', 'none', 'muted');
  }

  add('queue', `${repo.queue.queued} queued, ${repo.queue.running} running`, repo.queue.queued ? 'busy' : 'plain');
  if (!repo.staging) add('staging', 'unknown (could not read git)', 'warn');
  else if (!repo.staging.exists) add('staging', `no ${STAGING_BRANCH} branch`, 'muted');
  else
    add(
      'staging',
      `${STAGING_BRANCH} ${repo.staging.ahead} ahead, ${repo.staging.behind} behind ${repo.baseBranch}`,
      repo.staging.ahead ? 'ok' : 'plain',
    );
  const pr = repo.pullRequest;
  if (pr?.number !== undefined && pr.number !== null) {
    const mergeable = pr.mergeable === null ? 'mergeable unknown' : pr.mergeable ? 'mergeable' : 'not mergeable';
    add(
      'pull request',
      `#${pr.number} ${pr.merged ? 'merged' : (pr.state ?? '?')}, ${mergeable}: ${pr.url ?? ''}`,
      pullRequestTone(pr),
    );
    add(
      'checks',
      pr.checks.length ? pr.checks.map((check) => `${check.name} ${check.conclusion}`).join(', ') : 'none reported',
      pullRequestTone(pr),
    );
  } else if (pr?.action === 'failed') add('pull request', pr.detail, 'bad');

  if (!repo.board) add('board', 'unknown (could not read the board)', 'warn');
  else {
    const unreadable = repo.board.unreadable ? `, ${repo.board.unreadable} unreadable` : '';
    add(
      'board',
      `${repo.board.ready} ready, ${repo.board.parked} parked${unreadable}, ${repo.board.total} tasks`,
      repo.board.unreadable ? 'bad' : repo.board.parked ? 'warn' : 'plain',
    );
  }

  if (repo.lastRun) {
    const run = repo.lastRun;
    const exit = run.exitCode === null ? '' : `, exit ${run.exitCode}`;
    const ended = run.endedAt ? `, ended ${run.endedAt}` : '';
    const cost = run.cost === null ? '' : `, cost ${run.cost}`;
    add(
      'last run',
      `${run.id} ${run.outcome} by ${run.trigger}${exit}${ended}: ${run.landed} landed, ${run.parked} parked, ${run.failed} failed${cost}`,
      outcomeTone(run.outcome),
    );
  } else {
    add('last run', 'none', 'muted');
  }
  if (repo.spend) {
    const caps = [
      repo.spend.dailyUsd !== null ? `daily $${repo.spend.dailyUsd}` : '',
      repo.spend.dailyTokens !== null ? `daily ${repo.spend.dailyTokens} tokens` : '',
      repo.spend.taskUsd !== null ? `task $${repo.spend.taskUsd}` : '',
    ].filter(Boolean);
    add(
      'spend',
      `today ${repo.spend.today.text}, ${repo.spend.today.tokens} tokens, ${repo.spend.today.sessions} sessions; budgets: ${caps.join(', ') || 'none'}`,
      'plain',
    );
    if (repo.spend.hold) add('held', repo.spend.hold, 'warn');
  }
  for (const error of repo.errors) add('error', error, 'bad');
  return lines;
}

function footerStatus(status: RefreshStatus, now: number): { status: string; tone: Tone } {
  const every = `every ${status.intervalSec}s`;
  if (status.error) return { status: `cannot read the fleet: ${status.error} (${every})`, tone: 'bad' };
  if (status.lastReadAt === null) return { status: `reading the fleet... (${every})`, tone: 'muted' };
  const ago = formatAge(Math.max(0, Math.round((now - status.lastReadAt) / 1000)));
  return { status: `read ${ago} ago${status.reading ? ', reading...' : ''} (${every})`, tone: 'muted' };
}

/** The fleet screen's labelled keys (keys.ts). */
export const FOOTER_KEYS = hintText(keyHints({ screen: 'fleet', tab: 'summary' }));

export interface ViewOptions {
  /** Show only repos whose name contains this (the `/` filter). */
  readonly filter?: string;
  /** The table's columns (FLEET_COLUMNS unless a caller adds its own). */
  readonly columns?: readonly Column[];
}

/** Pure: one frame of the dashboard. */
export function buildView(
  fleet: Fleet | null,
  selected: string | null,
  now: number,
  status: RefreshStatus,
  options: ViewOptions = {},
): FleetView {
  const columns = options.columns ?? FLEET_COLUMNS;
  const filter = (options.filter ?? '').trim().toLowerCase();
  const drift = fleet ? Math.max(0, Math.round((now - Date.parse(fleet.generatedAt)) / 1000)) : 0;
  const all = fleet?.repos ?? [];
  const repos = filter ? all.filter((repo) => repo.name.toLowerCase().includes(filter)) : all;
  // Cells and details carry agent text (task ids, reasons, errors): printable only.
  const raw = repos.map((repo) =>
    columns.map((column) => column.cell(repo, drift)).map((cell) => ({ ...cell, text: printableLine(cell.text) })),
  );
  const widths = columns.map((column, i) =>
    Math.min(column.max, Math.max(column.title.length, ...raw.map((cells) => cells[i]!.text.length))),
  );
  const header = columns
    .map((column, i) => fit(column.title, widths[i]!))
    .join(COLUMN_GAP)
    .trimEnd();
  const rows = repos.map((repo, r) => ({
    name: repo.name,
    cells: raw[r]!.map((cell, i) => ({ text: fit(cell.text, widths[i]!), tone: cell.tone })),
  }));
  const found = selected === null ? -1 : repos.findIndex((repo) => repo.name === selected);
  const index = repos.length ? Math.max(0, found) : -1;

  const problems: DetailLine[] = (fleet?.problems ?? []).map((p) => ({
    label: 'registry',
    text: `${p.file}: ${p.key}: ${p.problem}; ${p.fix}`,
    tone: 'bad' as const,
  }));
  let details: FleetView['details'];
  if (index >= 0)
    details = {
      title: repos[index]!.name,
      lines: [...detailLines(repos[index]!, drift), ...problems].map((line) => ({
        ...line,
        text: printableLine(line.text),
      })),
    };
  else if (fleet && filter && all.length)
    details = {
      title: 'no match',
      lines: [
        { label: 'filter', text: `no repo name contains "${filter}" (Esc clears the filter)`, tone: 'muted' as const },
      ],
    };
  else if (fleet)
    details = {
      title: 'no repos',
      lines: [
        { label: 'registry', text: `no repos registered in ${fleet.registry}`, tone: 'muted' as const },
        ...problems,
      ].map((line) => ({ ...line, text: printableLine(line.text) })),
    };
  else details = { title: 'fleet', lines: [] };

  const running = all.filter((repo) => repo.run).length;
  const broken = all.filter((repo) => repo.errors.length || repo.watcher.state === 'dead').length;
  const shown = filter ? `, ${repos.length} shown (filter "${filter}")` : '';
  const title = fleet
    ? `agent-runner fleet: ${all.length} repo${all.length === 1 ? '' : 's'}, ${running} running, ${broken} with problems${fleet.problems.length ? `, ${fleet.problems.length} registry problem${fleet.problems.length === 1 ? '' : 's'}` : ''}${shown}  (${fleet.registry})`
    : 'agent-runner fleet';
  const footer = footerStatus(status, now);
  return {
    title: printableLine(title),
    header,
    rows,
    selected: index,
    details,
    footer: { keys: FOOTER_KEYS, ...footer, status: printableLine(footer.status) },
  };
}

/** The text of a table row as it appears on screen. */
export function rowText(row: TableRow): string {
  return row.cells
    .map((cell) => cell.text)
    .join(COLUMN_GAP)
    .trimEnd();
}

/** One frame as plain text (tui --once): for scripts and terminals without a screen. */
export function renderFrameText(view: FleetView): string {
  const labelWidth = Math.max(0, ...view.details.lines.map((line) => line.label.length));
  const out = [view.title, '', view.header, ...view.rows.map(rowText), '', `[${view.details.title}]`];
  for (const line of view.details.lines) out.push(`${line.label.padEnd(labelWidth)}  ${line.text}`);
  return `${out.join('\n')}\n`;
}

/** The staging cell with the pull request's short state after it (promote = "pr"). */
function withPullRequest(repo: FleetRepo, cell: { text: string; tone: Tone }): { text: string; tone: Tone } {
  const text = pullRequestCell(repo.pullRequest);
  if (!text) return cell;
  const tone = pullRequestTone(repo.pullRequest!);
  return { text: `${cell.text} ${text}`, tone: tone === 'plain' ? cell.tone : tone };
}

function pullRequestTone(pr: NonNullable<FleetRepo['pullRequest']>): Tone {
  if (pr.action === 'failed' || pr.checks.some((check) => check.state === 'failure')) return 'bad';
  if (pr.checks.some((check) => check.state === 'pending')) return 'busy';
  return pr.merged || pr.checks.length ? 'ok' : 'plain';
}
