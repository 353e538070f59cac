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
import { detailLines, FOOTER_KEYS, outcomeTone, type DetailLine, type Tone } from './view-model.js';
import { TABS, spinnerFrame, type ConsoleState, type Overlay, type Tab, type TaskRow } from './console-state.js';
import { helpLines } from './keys.js';

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
  /** Already described (control/transcripts/view.ts). */
  readonly lines: readonly string[];
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
  /** The line to keep in view (the selected task), or -1. */
  readonly focus: number;
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
    line(
      `${'RUN'.padEnd(29)} ${'BY'.padEnd(8)} ${'STARTED'.padEnd(11)} ${'TOOK'.padStart(4)} ${'OUTCOME'.padEnd(13)} L/P/F`,
      'muted',
    ),
  ];
  for (const run of history.runs) {
    const c = run.counts;
    out.push(
      line(
        `${run.id.padEnd(29)} ${(run.trigger === 'orchestrate' ? 'by hand' : run.trigger).padEnd(8)} ${run.startedAt.slice(5, 16).replace('T', ' ')} ${duration(run).padStart(4)} ${run.outcome.padEnd(13)} ${c.landed}/${c.parked + c.blocked}/${c.failed}`,
        run.status === 'running' ? 'busy' : outcomeTone(run.outcome),
      ),
    );
    if (run.cost !== null || run.tokens !== null)
      out.push(
        line(`    ${run.tokens === null ? '' : `${run.tokens} tokens, `}cost ${run.cost ?? 'unknown'}`, 'muted'),
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
): { lines: TextLine[]; focus: number } {
  const lines: TextLine[] = [];
  if (!staging || staging.state === 'loading') lines.push(line('reading parked and blocked tasks...', 'muted'));
  else if (staging.state === 'error')
    lines.push(line(`cannot read the board on ${STAGING_BRANCH}: ${staging.message}`, 'bad'));
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

function logLines(tail: TranscriptTail | undefined, followTask: string | undefined): TextLine[] {
  if (!tail) return [line('reading the transcript...', 'muted')];
  const head = line(
    tail.name
      ? `following ${tail.name}${followTask ? '' : ' (the newest transcript)'}; End follows again after scrolling`
      : `no transcript${followTask ? ` of ${followTask}` : ''} yet`,
    'muted',
  );
  return [head, ...(tail.error ? [line(tail.error, 'bad')] : []), ...tail.lines.map((text) => line(text))];
}

/** Pure: the repo screen of `repo` on `tab`. */
export function buildRepoScreen(
  repo: FleetRepo,
  state: Pick<ConsoleState, 'tab' | 'selectedTask' | 'followTask'>,
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
      const { lines, focus } = tasksLines(taskRows(repo, details.staging), state.selectedTask, details.staging);
      return { title, tabs, lines, focus };
    }
    case 'log':
      return { title, tabs, lines: logLines(details.log, state.followTask), focus: -1 };
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
  for (const text of transcript.lines) lines.push(line(`  ${text}`));
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

/** Pure: the keys the footer names on each screen (short enough for 80 columns). */
export function footerKeys(state: Pick<ConsoleState, 'screen' | 'tab' | 'editingFilter' | 'filter'>): string {
  if (state.editingFilter) return `/${state.filter}_  (Enter keep, Esc clear)`;
  if (state.screen === 'fleet') return FOOTER_KEYS;
  return state.tab === 'tasks'
    ? '? help  esc back  tab  enter why  u unpark  l log'
    : '? help  esc back  tab  1-4  d e p x w';
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

/**
 * Pure: the footer line: the keys, then the status; an action's spinner or result comes first, so 80 columns never cut
 * it.
 */
export function footerLine(
  keys: string,
  status: TextLine,
  actionFirst: boolean,
): { keys: string; status: TextLine; order: 'keys-first' | 'status-first' } {
  return { keys, status, order: actionFirst ? 'status-first' : 'keys-first' };
}

/** The screen as plain text (docs captures and tests). */
export function renderRepoText(screen: RepoScreen, footer: string): string {
  return `${[screen.title, screen.tabs, ...screen.lines.map((l) => l.text), footer].join('\n')}\n`;
}

export function renderOverlayText(view: OverlayView): string {
  return `${[`[${view.title}]`, ...view.lines.map((l) => l.text)].join('\n')}\n`;
}

export type { Tab };
