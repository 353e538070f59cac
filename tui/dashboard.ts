// The blessed layer of `agent-runner tui`: paints what view-model.ts,
// repo-view.ts and console-state.ts decide, feeds keys to handleKey and runs
// the effects it returns off the render path (commands and reads are
// promises; the screen keeps drawing, with a spinner, while they run).
// Limits it lives with: blessed draws box lines with the terminal's
// alternate character set (ACS) unless NCURSES_NO_UTF8_ACS is set, and
// forceUnicode alone does not change that; under tmux and in captures ACS
// lines come out as "lqqqk". So the screen is marked as having no usable ACS
// and unicode forced: box lines are written as the Unicode characters every
// UTF-8 terminal shows. The screen is restored on q, Ctrl-C and on the
// terminate signal (SIGTERM/SIGINT from the entry point); a second signal
// exits the process, and blessed's own exit handler restores the terminal
// then.
import blessed from 'blessed';
import type { Fleet } from '../src/control/fleet/fleet.js';
import type { Clock } from '../src/ports.js';
import { buildView, type FleetView, type Tone } from './view-model.js';
import { FleetRefresher } from './refresh.js';
import {
  actionEnded,
  actionStarted,
  currentRepo,
  handleKey,
  INITIAL_STATE,
  type ConsoleState,
  type Effect,
  type Key,
} from './console-state.js';
import {
  buildOverlay,
  buildRepoScreen,
  discardConfirmation,
  emptyDetails,
  footerKeys,
  footerRows,
  footerStatus,
  logSearchLines,
  promoteConfirmation,
  taskRows,
  confirmedArgs,
  type RepoDetails,
  type RepoScreen,
  type TextLine,
} from './repo-view.js';
import { highlightPieces } from './log-search.js';
import { describeActionResult } from './action-result.js';
import type { ConsoleServices, StartedAction } from './services.js';

export interface DashboardOptions {
  readonly loadFleet: () => Promise<Fleet>;
  readonly services: ConsoleServices;
  readonly clock: Clock;
  readonly intervalSec: number;
  /** Aborted on SIGTERM/SIGINT: the dashboard closes and the terminal is restored. */
  readonly terminate: AbortSignal;
  /** Another terminal than the process's own (the benchmark draws into a stream). */
  readonly terminal?: {
    readonly input: NodeJS.ReadableStream;
    readonly output: NodeJS.WritableStream;
    readonly name: string;
  };
}

const COLOURS: Record<Tone, string | null> = {
  plain: null,
  ok: 'green',
  busy: 'cyan',
  warn: 'yellow',
  bad: 'red',
  muted: 'gray',
};
const SPINNER_MS = 125;

function paint(text: string, tone: Tone): string {
  const colour = COLOURS[tone];
  const escaped = blessed.escape(text);
  return colour ? `{${colour}-fg}${escaped}{/${colour}-fg}` : escaped;
}

const paintLines = (lines: readonly TextLine[]) => lines.map((l) => paint(l.text, l.tone)).join('\n');

/** The repo screen's lines with the search's matches highlighted: each match on yellow, the current one reversed. */
function paintScreen(view: RepoScreen): string {
  const highlight = view.highlight;
  if (!highlight) return paintLines(view.lines);
  return view.lines
    .map((l, i) =>
      (i < highlight.from ? [{ text: l.text, match: false }] : highlightPieces(l.text, highlight.query))
        .map((piece) =>
          !piece.match
            ? paint(piece.text, l.tone)
            : i === highlight.current
              ? `{inverse}${blessed.escape(piece.text)}{/inverse}`
              : `{black-fg}{yellow-bg}${blessed.escape(piece.text)}{/yellow-bg}{/black-fg}`,
        )
        .join(''),
    )
    .join('\n');
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Runs until the operator quits or the process is told to terminate. */
export function runDashboard(options: DashboardOptions): Promise<void> {
  const { services } = options;
  // blessed's types call both streams Writable; it reads input and writes output.
  const terminal = (
    options.terminal
      ? { input: options.terminal.input, output: options.terminal.output, terminal: options.terminal.name }
      : {}
  ) as Partial<blessed.Widgets.IScreenOptions>;
  const screen = blessed.screen({
    smartCSR: true,
    forceUnicode: true,
    fullUnicode: true,
    title: 'agent-runner fleet',
    ...terminal,
  });
  // What NCURSES_NO_UTF8_ACS=1 does, without asking the operator to set it.
  (screen.program as unknown as { tput: { brokenACS: boolean } }).tput.brokenACS = true;
  const title = blessed.box({
    parent: screen,
    top: 0,
    left: 0,
    width: '100%',
    height: 1,
    tags: true,
    style: { bold: true },
  });
  const table = blessed.box({
    parent: screen,
    top: 1,
    left: 0,
    width: '100%',
    height: 5,
    border: { type: 'line' },
    label: ' repos ',
  });
  const header = blessed.box({ parent: table, top: 0, left: 0, width: '100%-2', height: 1, style: { bold: true } });
  const list = blessed.list({
    parent: table,
    top: 1,
    left: 0,
    width: '100%-2',
    height: '100%-3',
    tags: true,
    keys: false,
    mouse: false,
    style: { selected: { inverse: true } },
  });
  const details = blessed.box({
    parent: screen,
    top: 6,
    left: 0,
    width: '100%',
    bottom: 1,
    border: { type: 'line' },
    tags: true,
    scrollable: true,
    alwaysScroll: true,
  });
  const tabs = blessed.box({ parent: screen, top: 1, left: 0, width: '100%', height: 1, tags: true, hidden: true });
  const body = blessed.box({
    parent: screen,
    top: 2,
    left: 0,
    width: '100%',
    bottom: 1,
    border: { type: 'line' },
    tags: true,
    scrollable: true,
    alwaysScroll: true,
    hidden: true,
  });
  const overlay = blessed.box({
    parent: screen,
    top: 'center',
    left: 'center',
    width: '96%',
    height: '90%',
    border: { type: 'line' },
    tags: true,
    scrollable: true,
    alwaysScroll: true,
    hidden: true,
    style: { bg: 'black' },
  });
  const footer = blessed.box({ parent: screen, bottom: 0, left: 0, width: '100%', height: 1, tags: true });

  let state: ConsoleState = INITIAL_STATE;
  let repoDetails: RepoDetails | undefined;
  let closed = false;
  let followBottom = true;
  let following: AbortController | undefined;
  const running = new Map<number, StartedAction>();
  let spinner: { cancel(): void } | undefined;

  const detailsFor = (repo: string): RepoDetails => {
    if (repoDetails?.repo !== repo) repoDetails = emptyDetails(repo);
    return repoDetails;
  };
  const setDetails = (repo: string, change: Partial<RepoDetails>) => {
    repoDetails = { ...detailsFor(repo), ...change };
    draw();
  };

  const draw = () => {
    if (closed) return;
    const now = options.clock.now();
    const refresh = refresher.state;
    const fleetView: FleetView = buildView(
      refresh.fleet,
      state.selectedRepo,
      now,
      {
        lastReadAt: refresh.lastReadAt,
        error: refresh.error,
        reading: refresh.reading,
        intervalSec: options.intervalSec,
      },
      { filter: state.filter },
    );
    const repo = currentRepo(state, refresh.fleet);
    if (repo && state.selectedRepo !== repo.name) state = { ...state, selectedRepo: repo.name };
    const status = footerStatus(state, now, { text: fleetView.footer.status, tone: fleetView.footer.tone });
    const rows = footerRows(
      footerKeys(state),
      status,
      state.actions.length > 0 || state.result !== null,
      Math.max(20, Number(screen.width)),
    );
    // A long error takes more rows rather than losing its end; the panes above give them up.
    footer.height = rows.length;
    details.bottom = rows.length;
    body.bottom = rows.length;
    footer.setContent(rows.map((row) => row.map((piece) => paint(piece.text, piece.tone)).join('')).join('\n'));
    title.setContent(paint(fleetView.title, 'plain'));

    const onRepo = state.screen === 'repo' && repo !== undefined;
    for (const widget of [table, details]) widget[onRepo ? 'hide' : 'show']();
    for (const widget of [tabs, body]) widget[onRepo ? 'show' : 'hide']();
    if (onRepo) {
      const drift = refresh.fleet ? Math.max(0, Math.round((now - Date.parse(refresh.fleet.generatedAt)) / 1000)) : 0;
      const view = buildRepoScreen(repo, state, detailsFor(repo.name), drift);
      tabs.setContent(paint(view.tabs, 'plain'));
      body.setLabel(` ${view.title} `);
      body.setContent(paintScreen(view));
      if (state.tab === 'log' && followBottom) body.setScrollPerc(100);
      if (view.focus >= 0) {
        // Keep the selected task in view.
        const height = Math.max(1, Number(body.height) - 2);
        const top = body.getScroll();
        if (view.focus < top) body.scrollTo(view.focus);
        else if (view.focus >= top + height) body.scrollTo(view.focus - height + 1);
      }
    } else {
      header.setContent(blessed.escape(fleetView.header));
      list.setItems(
        fleetView.rows.map((row) =>
          row.cells.map((cell) => paint(cell.text, cell.tone)).join('  '),
        ) as unknown as string[],
      );
      if (fleetView.selected >= 0) list.select(fleetView.selected);
      // The table grows with the fleet, up to half the screen; the details take the rest.
      const rowsHigh = Math.max(1, Math.min(fleetView.rows.length, Math.floor(Number(screen.height) / 2) - 3));
      table.height = rowsHigh + 3;
      details.top = 1 + rowsHigh + 3;
      details.setLabel(` ${fleetView.details.title} `);
      const labelWidth = Math.max(0, ...fleetView.details.lines.map((line) => line.label.length));
      details.setContent(
        fleetView.details.lines
          .map((line) => `${blessed.escape(line.label.padEnd(labelWidth))}  ${paint(line.text, line.tone)}`)
          .join('\n'),
      );
    }
    if (state.overlay) {
      const rows = repo ? taskRows(repo, detailsFor(repo.name).staging) : [];
      const view = buildOverlay(state.overlay, repo ? detailsFor(repo.name) : undefined, rows);
      overlay.setLabel(` ${view.title} `);
      overlay.setContent(paintLines(view.lines));
      overlay.show();
      overlay.setFront();
    } else overlay.hide();
    screen.render();
  };

  const refresher = new FleetRefresher(options.loadFleet, () => options.clock.now(), draw);

  const tickSpinner = () => {
    spinner?.cancel();
    spinner = undefined;
    if (closed || !state.actions.length) return;
    spinner = options.clock.setTimer(SPINNER_MS, () => {
      draw();
      tickSpinner();
    });
  };

  const runAction = (label: string, args: readonly string[]) => {
    const started = actionStarted(state, label, options.clock.now());
    state = started.state;
    let action: StartedAction;
    try {
      action = services.start(args);
    } catch (error) {
      state = actionEnded(state, started.id, { text: `${label}: cannot start: ${message(error)}`, tone: 'bad' });
      return draw();
    }
    running.set(started.id, action);
    tickSpinner();
    draw();
    void action.done
      .then((outcome) => ({ result: describeActionResult(label, outcome), whole: { label, ...outcome } }))
      .catch((error: unknown) => ({
        result: { text: `${label}: ${message(error)}`, tone: 'bad' as Tone },
        whole: { label, exitCode: null, stdout: '', stderr: message(error) },
      }))
      .then(({ result, whole }) => {
        running.delete(started.id);
        state = actionEnded(state, started.id, result, whole);
        // What the action changed shows at once: the fleet, and the open tab.
        void refresher.refresh();
        if (state.screen === 'repo' && state.selectedRepo && (state.tab === 'tasks' || state.tab === 'runs'))
          loadTab(state.selectedRepo, state.tab);
        draw();
      });
  };

  const loadTab = (repo: string, tab: 'runs' | 'tasks' | 'summary' | 'log') => {
    if (tab === 'runs') {
      setDetails(repo, { runs: detailsFor(repo).runs?.state === 'ok' ? detailsFor(repo).runs : { state: 'loading' } });
      services.runHistory(repo).then(
        (value) => setDetails(repo, { runs: { state: 'ok', value } }),
        (error: unknown) => setDetails(repo, { runs: { state: 'error', message: message(error) } }),
      );
    } else if (tab === 'tasks') {
      setDetails(repo, {
        staging: detailsFor(repo).staging?.state === 'ok' ? detailsFor(repo).staging : { state: 'loading' },
      });
      services.staging(repo, false).then(
        (value) => setDetails(repo, { staging: { state: 'ok', value } }),
        (error: unknown) => setDetails(repo, { staging: { state: 'error', message: message(error) } }),
      );
    }
  };

  const preview = (repo: string, action: 'promote' | 'discard') => {
    services.staging(repo, action === 'promote').then(
      (facts) => {
        if (state.overlay?.kind !== 'loading') return; // cancelled meanwhile
        setDetails(repo, { staging: { state: 'ok', value: facts } });
        const confirmation = action === 'promote' ? promoteConfirmation(repo, facts) : discardConfirmation(repo, facts);
        if ('nothing' in confirmation)
          state = { ...state, overlay: null, result: { text: confirmation.nothing, tone: 'muted' } };
        else
          state = {
            ...state,
            overlay: {
              kind: 'confirm',
              title: `${action} ${repo}`,
              lines: confirmation.lines,
              onYes: { kind: 'run', label: `${action} ${repo}`, args: confirmedArgs(action, repo, facts) },
            },
          };
        draw();
      },
      (error: unknown) => {
        if (state.overlay?.kind !== 'loading') return;
        state = {
          ...state,
          overlay: null,
          result: { text: `${action} ${repo}: cannot read ${'auto/work'}: ${message(error)}`, tone: 'bad' },
        };
        draw();
      },
    );
  };

  const stopFollowing = () => {
    following?.abort();
    following = undefined;
  };

  const apply = (effect: Effect) => {
    switch (effect.kind) {
      case 'quit':
        return close();
      case 'stop-and-quit':
        for (const action of running.values()) action.stop();
        return close();
      case 'refresh':
        return void refresher.refresh();
      case 'run':
        return runAction(effect.label, effect.args);
      case 'load-tab':
        return loadTab(effect.repo, effect.tab);
      case 'preview':
        return preview(effect.repo, effect.action);
      case 'unfollow':
        return stopFollowing();
      case 'follow': {
        stopFollowing();
        const controller = new AbortController();
        following = controller;
        followBottom = true;
        setDetails(effect.repo, { log: undefined });
        services
          .follow(
            effect.repo,
            effect.task,
            (tail) => {
              if (!controller.signal.aborted) setDetails(effect.repo, { log: tail });
            },
            controller.signal,
          )
          .catch((error: unknown) => {
            if (!controller.signal.aborted)
              setDetails(effect.repo, { log: { name: undefined, lines: [], error: message(error) } });
          });
        return;
      }
      case 'task-detail':
        setDetails(effect.repo, { task: { state: 'loading' } });
        services.taskDetail(effect.repo, effect.taskId).then(
          (value) => setDetails(effect.repo, { task: { state: 'ok', value } }),
          (error: unknown) => setDetails(effect.repo, { task: { state: 'error', message: message(error) } }),
        );
        return;
      case 'scroll': {
        const pane = state.overlay ? overlay : state.screen === 'repo' ? body : details;
        const page = Math.max(1, Number(pane.height) - 3);
        if (effect.by === 'top') pane.setScroll(0);
        else if (effect.by === 'end') pane.setScrollPerc(100);
        else
          pane.scroll(
            effect.by === 'line-up' ? -1 : effect.by === 'line-down' ? 1 : effect.by === 'page-up' ? -page : page,
          );
        if (pane === body) followBottom = effect.by === 'end';
        screen.render();
        return;
      }
    }
  };

  let resolveClosed: () => void = () => undefined;
  let timer: { cancel(): void } | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    timer?.cancel();
    spinner?.cancel();
    stopFollowing();
    options.terminate.removeEventListener('abort', onTerminate);
    screen.destroy();
    resolveClosed();
  };
  const onTerminate = () => {
    for (const action of running.values()) action.stop();
    close();
  };

  return new Promise<void>((resolve) => {
    resolveClosed = resolve;
    const schedule = () => {
      timer = options.clock.setTimer(options.intervalSec * 1000, () => {
        // refresh() skips the tick by itself when the previous read is still going.
        void refresher.refresh();
        schedule();
      });
    };
    screen.on('keypress', (ch: string | undefined, key: { full?: string; name?: string } | undefined) => {
      const name = key?.full || key?.name || ch;
      // blessed reports Enter twice, as "return" and then as "enter": one is enough.
      if (!name || name === 'return' || closed) return;
      const normalized: Key = { name, ch };
      const repo = currentRepo(state, refresher.state.fleet);
      const facts = {
        fleet: refresher.state.fleet,
        tasks: repo ? taskRows(repo, detailsFor(repo.name).staging) : [],
        logLines: repo ? logSearchLines(detailsFor(repo.name).log) : [],
      };
      const before = state.selectedRepo;
      const step = handleKey(state, normalized, facts);
      state = step.state;
      if (state.selectedRepo !== before) followBottom = true;
      for (const effect of step.effects) apply(effect);
      draw();
    });
    screen.on('resize', draw);
    options.terminate.addEventListener('abort', onTerminate);
    if (options.terminate.aborted) return close();
    draw();
    void refresher.refresh();
    schedule();
  });
}
