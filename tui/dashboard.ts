// The blessed layer of `agent-runner tui`: paints what view-model.ts decides
// and turns keys into selection moves and refreshes. Limits it lives with:
// blessed draws box lines with the terminal's alternate character set (ACS)
// unless NCURSES_NO_UTF8_ACS is set, and forceUnicode alone does not change
// that; under tmux and in captures ACS lines come out as "lqqqk". So the
// screen is marked as having no usable ACS and unicode forced: box lines are
// written as the Unicode characters every UTF-8 terminal shows. The screen
// is restored on q, Ctrl-C and on the terminate signal (SIGTERM/SIGINT from
// the entry point); a second signal exits the process, and blessed's own exit
// handler restores the terminal then.
import blessed from 'blessed';
import type { Fleet } from '../src/control/fleet.js';
import type { Clock } from '../src/ports.js';
import { buildView, moveSelection, type FleetView, type Tone } from './view-model.js';
import { FleetRefresher } from './refresh.js';

export interface DashboardOptions {
  readonly loadFleet: () => Promise<Fleet>;
  readonly clock: Clock;
  readonly intervalSec: number;
  /** Aborted on SIGTERM/SIGINT: the dashboard closes and the terminal is restored. */
  readonly terminate: AbortSignal;
}

const COLOURS: Record<Tone, string | null> = { plain: null, ok: 'green', busy: 'cyan', warn: 'yellow', bad: 'red', muted: 'gray' };

function paint(text: string, tone: Tone): string {
  const colour = COLOURS[tone];
  const escaped = blessed.escape(text);
  return colour ? `{${colour}-fg}${escaped}{/${colour}-fg}` : escaped;
}

/** Runs until the operator quits or the process is told to terminate. */
export function runDashboard(options: DashboardOptions): Promise<void> {
  const screen = blessed.screen({
    smartCSR: true,
    forceUnicode: true,
    fullUnicode: true,
    title: 'agent-runner fleet',
  });
  // What NCURSES_NO_UTF8_ACS=1 does, without asking the operator to set it.
  (screen.program as unknown as { tput: { brokenACS: boolean } }).tput.brokenACS = true;
  const title = blessed.box({ parent: screen, top: 0, left: 0, width: '100%', height: 1, tags: true, style: { bold: true } });
  const table = blessed.box({ parent: screen, top: 1, left: 0, width: '100%', height: 5, border: { type: 'line' }, label: ' repos ' });
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
  const details = blessed.box({ parent: screen, top: 6, left: 0, width: '100%', bottom: 1, border: { type: 'line' }, tags: true, scrollable: true });
  const footer = blessed.box({ parent: screen, bottom: 0, left: 0, width: '100%', height: 1, tags: true });

  let selected: string | null = null;
  let closed = false;

  const draw = () => {
    if (closed) return;
    const state = refresher.state;
    const view: FleetView = buildView(state.fleet, selected, options.clock.now(), {
      lastReadAt: state.lastReadAt,
      error: state.error,
      reading: state.reading,
      intervalSec: options.intervalSec,
    });
    selected = view.selected >= 0 ? view.rows[view.selected]!.name : null;
    title.setContent(paint(view.title, 'plain'));
    header.setContent(blessed.escape(view.header));
    list.setItems(view.rows.map((row) => row.cells.map((cell) => paint(cell.text, cell.tone)).join('  ')));
    if (view.selected >= 0) list.select(view.selected);
    // The table grows with the fleet, up to half the screen; the details take the rest.
    const rowsHigh = Math.max(1, Math.min(view.rows.length, Math.floor(Number(screen.height) / 2) - 3));
    table.height = rowsHigh + 3;
    details.top = 1 + rowsHigh + 3;
    details.setLabel(` ${view.details.title} `);
    const labelWidth = Math.max(0, ...view.details.lines.map((line) => line.label.length));
    details.setContent(view.details.lines.map((line) => `${blessed.escape(line.label.padEnd(labelWidth))}  ${paint(line.text, line.tone)}`).join('\n'));
    footer.setContent(`${paint(view.footer.keys, 'plain')}  |  ${paint(view.footer.status, view.footer.tone)}`);
    screen.render();
  };

  const refresher = new FleetRefresher(options.loadFleet, () => options.clock.now(), draw);

  return new Promise<void>((resolve) => {
    let timer: { cancel(): void } | undefined;
    const schedule = () => {
      timer = options.clock.setTimer(options.intervalSec * 1000, () => {
        // refresh() skips the tick by itself when the previous read is still going.
        void refresher.refresh();
        schedule();
      });
    };
    const close = () => {
      if (closed) return;
      closed = true;
      timer?.cancel();
      options.terminate.removeEventListener('abort', close);
      screen.destroy();
      resolve();
    };
    screen.key(['q', 'C-c'], close);
    screen.key(['up', 'k'], () => {
      selected = moveSelection(refresher.state.fleet, selected, -1);
      draw();
    });
    screen.key(['down', 'j'], () => {
      selected = moveSelection(refresher.state.fleet, selected, 1);
      draw();
    });
    screen.key(['r'], () => void refresher.refresh());
    screen.on('resize', draw);
    options.terminate.addEventListener('abort', close);
    if (options.terminate.aborted) return close();
    draw();
    void refresher.refresh();
    schedule();
  });
}
