// The repo screen and the overlays, pure: a repo's tabs (summary, runs,
// tasks, log), a task's detail, the promote and discard confirmations, the
// help and the footer, each as lines with tones. Everything here can carry
// agent text (titles, reasons, transcript lines): it is printable-only by
// the time it leaves this file.
import { printableLine } from '../src/printable.js';
import type { FleetRepo } from '../src/control/fleet/fleet.js';
import type { RunHistory } from '../src/control/runs/history.js';
import type { StagingStatus } from '../src/staging/lifecycle.js';
import type { TaskReviewView } from '../src/control/repo-view/workspace-files.js';
import { STAGING_BRANCH } from '../src/staging/names.js';
import { detailLines, outcomeTone, type DetailLine, type Tone } from './view-model.js';
import { TABS, spinnerFrame, type ConsoleState, type Overlay, type Tab, type TaskRow } from './console-state.js';
import { helpLines, hintText, keyHints } from './keys.js';
import type { DisplayLine, LineKind } from '../src/control/transcripts/render.js';
import { logMatches } from './log-search.js';

/** A read the screen waits for. */
export type Loaded<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'ok'; readonly value: T }
  | { readonly state: 'error'; readonly message: string };

/** What `status --json` says that the screen uses. */
export type StagingFacts = Pick<
  StagingStatus,
  'baseBranch' | 'staging' | 'ahead' | 'behind' | 'landed' | 'parked' | 'blocked'
>;

export interface TranscriptTail {
  readonly name: string | undefined;
  /** Already rendered (control/transcripts/render.ts), as `logs` prints them. */
  readonly lines: readonly DisplayLine[];
  readonly error?: string;
}

export interface TaskDetail {
  readonly attempts: { readonly failures: number; readonly lastReason: string } | undefined;
  readonly transcript: TranscriptTail;
  /** What review said of it, when a review ran. */
  readonly review?: TaskReviewView;
}

/** Everything the repo screen has read for the selected repo. */
export interface RepoDetails {
  readonly repo: string;
  readonly runs: Loaded<RunHistory> | undefined;
  readonly staging: Loaded<StagingFacts> | undefined;
  readonly log: TranscriptTail | undefined;
  readonly task: Loaded<TaskDetail> | undefined;
}

export function emptyDetails(repo: string): RepoDetails {
  return { repo, runs: undefined, staging: undefined, log: undefined, task: undefined };
}

export interface TextLine {
  readonly text: string;
  readonly tone: Tone;
}

export interface RepoScreen {
  readonly title: string;
  /** "summary  runs  [tasks]  log". */
  readonly tabs: string;
  readonly lines: readonly TextLine[];
  /** The line to keep in view (the selected task, the current match), or -1. */
  readonly focus: number;
  /** The log tab's search: the text to highlight from line `from` on, and the line of the current match (-1: none). */
  readonly highlight?: { readonly query: string; readonly current: number; readonly from: number };
}

const line = (text: string, tone: Tone = 'plain'): TextLine => ({ text: printableLine(text), tone });

function fromDetail(lines: readonly DetailLine[]): TextLine[] {
  const width = Math.max(0, ...lines.map((l) => l.label.length));
  return lines.map((l) => line(`${l.label.padEnd(width)}  ${l.text}`, l.tone));
}

function loadingLines<T>(what: string, loaded: Loaded<T> | undefined, ok: (value: T) => TextLine[]): TextLine[] {
  if (!loaded || loaded.state === 'loading') return [line(`reading ${what}...`, 'muted')];
  if (loaded.state === 'error') return [line(`cannot read ${what}: ${loaded.message}`, 'bad')];
  return ok(loaded.value);
}

/** Pure: the tasks tab's rows: running (from the fleet), then parked, then blocked (from staging). */
export function taskRows(repo: FleetRepo, staging: Loaded<StagingFacts> | undefined): TaskRow[] {
  const rows: TaskRow[] = (repo.run?.runningTasks ?? []).map((id) => ({
    id,
    title: '',
    kind: 'running' as const,
    reason: `agent running in ${repo.run!.id}`,
  }));
  if (staging?.state === 'ok') {
    for (const task of staging.value.parked)
      rows.push({ id: task.id, title: task.title, kind: 'parked', reason: task.reason || 'no reason recorded' });
    for (const task of staging.value.blocked)
      rows.push({ id: task.id, title: task.title, kind: 'blocked', reason: task.reason });
  }
  return rows;
}

const KIND_TONE: Record<TaskRow['kind'], Tone> = { running: 'busy', parked: 'warn', blocked: 'warn' };

function duration(run: RunHistory['runs'][number]): string {
  if (!run.endedAt) return '-';
  const sec = Math.max(0, Math.round((Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 1000));
  return Number.isFinite(sec)
    ? sec < 120
      ? `${sec}s`
      : sec < 7200
        ? `${Math.round(sec / 60)}m`
        : `${Math.round(sec / 3600)}h`
    : '-';
}

/**
 * Fits 80 columns: the run id, who, when (UTC), how long, outcome, landed/parked/failed; tokens and cost below a run
 * once it has them.
 */
function runsLines(history: RunHistory): TextLine[] {
  if (!history.runs.length)
    return [
      line(`no runs recorded for ${history.target}`, 'muted'),
      ...history.errors.map((e) => line(`could not read: ${e}`, 'bad')),
    ];
  const out: TextLine[] = [
    line(`${'RUN'.padEnd(29)} ${'STARTED'.padEnd(11)} ${'TOOK'.padStart(4)} ${'OUTCOME'.padEnd(13)} L/P/F`, 'muted'),
  ];
  for (const run of history.runs) {
    const c = run.counts;
    out.push(
      line(
        `${run.id.padEnd(29)} ${run.startedAt.slice(5, 16).replace('T', ' ')} ${duration(run).padStart(4)} ${run.outcome.padEnd(13)} ${c.landed}/${c.parked + c.blocked}/${c.failed}`,
        run.status === 'running' ? 'busy' : outcomeTone(run.outcome),
      ),
    );
    // How it started in the words `runs` and fleet use, under the row: "orchestrate" would not fit a column at 80.
    const who = run.trigger === 'job' && run.jobId ? `job ${run.jobId}` : run.trigger;
    const spend = run.cost !== null || run.tokens !== null;
    out.push(
      line(
        `    by ${who}${spend ? `, ${run.tokens === null ? '' : `${run.tokens} tokens, `}cost ${run.cost ?? 'unknown'}` : ''}`,
        'muted',
      ),
    );
    for (const task of run.tasks)
      out.push(
        line(
          `    ${task.id} ${task.outcome}${task.reason ? `: ${task.reason}` : ''}`,
          task.outcome === 'landed'
            ? 'ok'
            : task.outcome === 'failed'
              ? 'bad'
              : task.outcome === 'parked' || task.outcome === 'blocked'
                ? 'warn'
                : 'plain',
        ),
      );
    if (run.detail) out.push(line(`    ${run.detail}`, 'muted'));
  }
  for (const error of history.errors) out.push(line(`could not read: ${error}`, 'bad'));
  return out;
}

function tasksLines(
  rows: readonly TaskRow[],
  selected: number,
  staging: Loaded<StagingFacts> | undefined,
  parkedCount?: number,
): { lines: TextLine[]; focus: number } {
  const lines: TextLine[] = [];
  if (!staging || staging.state === 'loading') lines.push(line('reading parked and blocked tasks...', 'muted'));
  else if (staging.state === 'error') {
    lines.push(line(`cannot read the board on ${STAGING_BRANCH}: ${staging.message}`, 'bad'));
    // The fleet row counted them from root's read; here they cannot be listed, and the screen says so.
    const counted = parkedCount ?? 0;
    if (counted)
      lines.push(
        line(
          `the fleet row counts ${counted} parked task${counted === 1 ? '' : 's'}: they cannot be listed until the board reads`,
          'warn',
        ),
      );
  }
  if (!rows.length && staging?.state === 'ok')
    lines.push(line(`no running, parked or blocked tasks on ${STAGING_BRANCH}`, 'muted'));
  const index = Math.min(selected, rows.length - 1);
  const width = Math.max(4, ...rows.map((row) => row.id.length));
  let focus = -1;
  rows.forEach((row, i) => {
    if (i === index) focus = lines.length;
    lines.push(
      line(
        `${i === index ? '>' : ' '} ${row.id.padEnd(width)}  ${row.kind.padEnd(7)}  ${row.title ? `${row.title}: ` : ''}${row.reason}`,
        i === index ? 'busy' : KIND_TONE[row.kind],
      ),
    );
  });
  if (rows.length)
    lines.push(
      line(''),
      line('Enter: reason, attempts, last transcript lines   u: un-park   l: follow its log', 'muted'),
    );
  return { lines, focus };
}

/** How each kind of transcript line shows. */
const KIND_TONES: Record<LineKind, Tone> = {
  run: 'busy',
  assistant: 'plain',
  thinking: 'muted',
  tool: 'ok',
  output: 'muted',
  error: 'bad',
  usage: 'warn',
  notice: 'warn',
  raw: 'plain',
  unknown: 'muted',
};

/** Transcript lines as the screen shows them. */
export function transcriptTextLines(lines: readonly DisplayLine[], indent = ''): TextLine[] {
  return lines.map((shown) => line(`${indent}${shown.text}`, KIND_TONES[shown.kind]));
}

/** The log tab's lines before the transcript's own: its name, and a read error. */
function logHead(tail: TranscriptTail, followTask: string | undefined): TextLine[] {
  const head = line(
    tail.name
      ? `following ${tail.name}${followTask ? '' : ' (the newest transcript)'}; / searches, G follows again after scrolling`
      : `no transcript${followTask ? ` of ${followTask}` : ''} yet`,
    'muted',
  );
  return [head, ...(tail.error ? [line(tail.error, 'bad')] : [])];
}

/** Pure: the log tab's transcript lines as text, what `/` searches (the current match is an index into them). */
export function logSearchLines(tail: TranscriptTail | undefined): string[] {
  return (tail?.lines ?? []).map((shown) => printableLine(shown.text));
}

function logScreen(
  tail: TranscriptTail | undefined,
  state: Pick<ConsoleState, 'followTask' | 'search'>,
): Pick<RepoScreen, 'lines' | 'focus' | 'highlight'> {
  if (!tail) return { lines: [line('reading the transcript...', 'muted')], focus: -1 };
  const head = logHead(tail, state.followTask);
  const { query, current } = state.search;
  const body = transcriptTextLines(tail.lines);
  const shown = query && !state.search.editing ? logMatches(logSearchLines(tail), query).length : 0;
  const status = query
    ? [
        line(
          state.search.editing
            ? `/${query}_  (Enter finds, Esc cancels)`
            : `/${query}: ${shown} matching line(s); n next, N previous, Esc clears`,
          'warn',
        ),
      ]
    : [];
  const before = head.length + status.length;
  const focus = current === null ? -1 : before + current;
  return {
    lines: [...head, ...status, ...body],
    focus,
    ...(query ? { highlight: { query, current: focus, from: before } } : {}),
  };
}

/** Pure: the repo screen of `repo` on `tab`. */
export function buildRepoScreen(
  repo: FleetRepo,
  state: Pick<ConsoleState, 'tab' | 'selectedTask' | 'followTask' | 'search'>,
  details: RepoDetails,
  drift: number,
): RepoScreen {
  const tabs = TABS.map((tab, i) => (tab === state.tab ? `[${i + 1} ${tab}]` : ` ${i + 1} ${tab} `)).join(' ');
  const title = `${repo.name}: ${repo.path}`;
  switch (state.tab) {
    case 'summary':
      return { title, tabs, lines: fromDetail(detailLines(repo, drift)), focus: -1 };
    case 'runs':
      return { title, tabs, lines: loadingLines('the run history', details.runs, runsLines), focus: -1 };
    case 'tasks': {
      const { lines, focus } = tasksLines(
        taskRows(repo, details.staging),
        state.selectedTask,
        details.staging,
        repo.board?.parked,
      );
      return { title, tabs, lines, focus };
    }
    case 'log':
      return { title, tabs, ...logScreen(details.log, state) };
  }
}

/** Pure: what Enter on a task shows. */
export function taskDetailLines(
  row: TaskRow | undefined,
  taskId: string,
  detail: Loaded<TaskDetail> | undefined,
): TextLine[] {
  const lines: TextLine[] = [
    line(`${taskId}${row?.title ? `: ${row.title}` : ''}`, 'plain'),
    line(`state     ${row?.kind ?? 'unknown'}`, row ? KIND_TONE[row.kind] : 'muted'),
    line(`reason    ${row?.reason ?? '-'}`, 'warn'),
  ];
  if (!detail || detail.state === 'loading') return [...lines, line('reading attempts and the transcript...', 'muted')];
  if (detail.state === 'error') return [...lines, line(`cannot read: ${detail.message}`, 'bad')];
  const { attempts, transcript } = detail.value;
  lines.push(
    line(
      `attempts  ${attempts ? `${attempts.failures} failed, last: ${attempts.lastReason}` : 'none on record (a parked task starts over)'}`,
      attempts ? 'warn' : 'muted',
    ),
  );
  const { review } = detail.value;
  if (review) {
    lines.push(line(`review    ${review.reviewer}: ${review.outcome}`, review.approved ? 'ok' : 'warn'));
    for (const round of review.rounds) {
      lines.push(line(`  round ${round.round}  ${round.judgement}`, round.judgement === 'approved' ? 'ok' : 'warn'));
      for (const text of round.lines) lines.push(line(`    ${text}`));
    }
  }
  lines.push(line(`log       ${transcript.name ?? 'no transcript'}`, 'muted'));
  if (transcript.error) lines.push(line(transcript.error, 'bad'));
  lines.push(...transcriptTextLines(transcript.lines, '  '));
  return lines;
}

/** Pure: the promote confirmation, or the reason there is nothing to confirm. */
export function promoteConfirmation(repo: string, facts: StagingFacts): { lines: string[] } | { nothing: string } {
  if (!facts.staging) return { nothing: `promote ${repo}: there is no ${STAGING_BRANCH} branch yet` };
  if (facts.ahead === 0)
    return { nothing: `promote ${repo}: ${STAGING_BRANCH} has nothing ahead of ${facts.baseBranch}` };
  const lines = [
    `${STAGING_BRANCH} is ${facts.ahead} commit(s) ahead and ${facts.behind} behind ${facts.baseBranch}.`,
    `${facts.baseBranch} fast-forwards to ${facts.staging.slice(0, 12)}; these tasks land:`,
    '',
  ];
  if (!facts.landed.length) lines.push('  (no task merges: the commits are board edits, parked or blocked notes)');
  for (const landing of facts.landed)
    lines.push(printableLine(`  ${landing.taskId}  ${landing.commit.slice(0, 10)}  ${landing.subject}`));
  if (facts.behind > 0)
    lines.push(
      '',
      `${STAGING_BRANCH} is behind ${facts.baseBranch}: promote refuses unless ${facts.baseBranch} is contained in it (the next drain merges it in).`,
    );
  lines.push('', `promote ${repo}? y / n`);
  return { lines };
}

/** The command a confirmation runs; a promote is pinned to the auto/work commit it showed. */
export function confirmedArgs(action: 'promote' | 'discard', repo: string, facts: StagingFacts): string[] {
  return action === 'promote' && facts.staging
    ? ['promote', '--repo', repo, '--expect-staging', facts.staging, '--json']
    : // The dashboard asked already; --yes tells discard so (it refuses with no terminal to ask on).
      [action, '--repo', repo, ...(action === 'discard' ? ['--yes'] : []), '--json'];
}

/** Pure: the discard confirmation. */
export function discardConfirmation(repo: string, facts: StagingFacts): { lines: string[] } | { nothing: string } {
  if (!facts.staging) return { nothing: `discard ${repo}: there is no ${STAGING_BRANCH} branch` };
  const lines = [
    `${STAGING_BRANCH} is reset to ${facts.baseBranch}; its ${facts.ahead} commit(s) ahead are dropped, with every task branch and worktree (parked ones too):`,
    '',
  ];
  for (const landing of facts.landed)
    lines.push(printableLine(`  ${landing.taskId}  ${landing.commit.slice(0, 10)}  ${landing.subject}`));
  if (!facts.landed.length) lines.push('  (no landed task)');
  lines.push('', `discard ${repo}? y / n`);
  return { lines };
}

export interface OverlayView {
  readonly title: string;
  readonly lines: readonly TextLine[];
}

/** Pure: the overlay's box. */
export function buildOverlay(
  overlay: Overlay,
  details: RepoDetails | undefined,
  rows: readonly TaskRow[],
): OverlayView {
  switch (overlay.kind) {
    case 'help':
      return { title: 'keys (any key closes)', lines: helpLines().map((text) => line(text)) };
    case 'form':
      return {
        title: `enqueue on ${overlay.repo}`,
        lines: [
          line('A task id (TASK-3) queues that task; any other text becomes a new task and runs.', 'muted'),
          line(''),
          line(`> ${overlay.value}_`),
          line(''),
          line('Enter queues it, Esc cancels', 'muted'),
        ],
      };
    case 'confirm':
      return { title: overlay.title, lines: overlay.lines.map((text) => line(text)) };
    case 'result':
      return {
        title: `${overlay.title} (any key closes, PgUp/PgDn scroll)`,
        lines: overlay.lines.map((text) => line(text, /^\s*stderr/.test(text) ? 'bad' : 'plain')),
      };
    case 'loading':
      return { title: overlay.title, lines: [line(`reading ${STAGING_BRANCH}... (Esc cancels)`, 'muted')] };
    case 'task':
      return {
        title: overlay.taskId,
        lines: taskDetailLines(
          rows.find((row) => row.id === overlay.taskId),
          overlay.taskId,
          details?.task,
        ),
      };
  }
}

/** Pure: the keys the footer names on each screen, labelled (`<d> dispatch`); what is typed while a field takes it. */
export function footerKeys(
  state: Pick<ConsoleState, 'screen' | 'tab' | 'editingFilter' | 'filter'> & Partial<Pick<ConsoleState, 'search'>>,
): string {
  if (state.editingFilter) return `/${state.filter}_  (Enter keep, Esc clear)`;
  if (state.search?.editing && state.screen === 'repo' && state.tab === 'log')
    return `/${state.search.query}_  (Enter finds, Esc cancels)`;
  return hintText(keyHints(state));
}

/** Pure: the footer's status: the spinner and running actions, else the last result, else the refresh status. */
export function footerStatus(
  state: Pick<ConsoleState, 'actions' | 'result'>,
  now: number,
  refresh: TextLine,
): TextLine {
  if (state.actions.length) {
    const first = state.actions[0]!;
    const more = state.actions.length > 1 ? ` (+${state.actions.length - 1} more)` : '';
    return line(`${spinnerFrame(now - first.startedAt)} ${first.label}...${more}`, 'busy');
  }
  if (state.result) return state.result.text === refresh.text ? refresh : line(state.result.text, state.result.tone);
  return refresh;
}

/** The footer never takes more than this many lines for the status, nor for the keys. */
const FOOTER_STATUS_ROWS = 3;
const FOOTER_KEY_ROWS = 2;
const ELIDED = ' ... ';

/** Words packed into rows of at most `width` (a word longer than a row is cut into pieces). */
function wrapWords(text: string, width: number, separator = ' '): string[] {
  const rows: string[] = [];
  let row = '';
  for (const word of text.split(separator)) {
    const next = row ? `${row}${separator}${word}` : word;
    if (next.length <= width) row = next;
    else {
      if (row) rows.push(row);
      let rest = word;
      while (rest.length > width) {
        rows.push(rest.slice(0, width));
        rest = rest.slice(width);
      }
      row = rest;
    }
  }
  if (row || !rows.length) rows.push(row);
  return rows;
}

/**
 * The status in at most three rows of `width`: wrapped, and when even that is too little, cut in the middle, so the
 * end of an error, where its fix is, always shows (`o` opens all of it).
 */
export function statusRows(text: string, width: number): string[] {
  const rows = wrapWords(text, width);
  if (rows.length <= FOOTER_STATUS_ROWS) return rows;
  const room = width * FOOTER_STATUS_ROWS - ELIDED.length - 2 * FOOTER_STATUS_ROWS;
  const head = Math.floor(room / 3);
  return wrapWords(`${text.slice(0, head)}${ELIDED}${text.slice(text.length - (room - head))}`, width).slice(
    0,
    FOOTER_STATUS_ROWS,
  );
}

/**
 * Pure: the footer's rows for a terminal `width` wide. Keys and status share one row when both fit (an action's
 * spinner or result first); otherwise the status wraps onto rows of its own above the keys, so an error's fix is never
 * cut off.
 */
export function footerRows(keys: string, status: TextLine, actionFirst: boolean, width: number): FooterRow[] {
  const keysPiece = line(keys);
  const bar = line('  |  ');
  if (keys.length + bar.text.length + status.text.length <= width)
    return [actionFirst ? [status, bar, keysPiece] : [keysPiece, bar, status]];
  const keyRows = wrapWords(keys, width, '  ').slice(0, FOOTER_KEY_ROWS);
  return [
    ...statusRows(status.text, width).map((text) => [line(text, status.tone)]),
    ...keyRows.map((text) => [line(text)]),
  ];
}

/** One footer row: pieces of text, each with its tone. */
export type FooterRow = readonly TextLine[];

/** The screen as plain text (docs captures and tests). */
export function renderRepoText(screen: RepoScreen, footer: string): string {
  return `${[screen.title, screen.tabs, ...screen.lines.map((l) => l.text), footer].join('\n')}\n`;
}

export function renderOverlayText(view: OverlayView): string {
  return `${[`[${view.title}]`, ...view.lines.map((l) => l.text)].join('\n')}\n`;
}

export type { Tab };
