// The dashboard in a real terminal: tmux runs `agent-runner tui` in a
// 120x30 pane against a temp registry of two repos; the test reads the
// screen with capture-pane and types with send-keys. Each test has its own
// tmux socket, killed in teardown, so no other tmux server is touched.
import t, { type Test } from 'tap';
import { writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitRepo, tempDir } from '../helpers/temp.js';
import { tmuxMayRun as mayRun, tmuxServer, type Tmux } from '../helpers/tmux.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'bin', 'agent-runner');

function fleetFixture(t: Test): { config: string; state: string } {
  const alpha = gitRepo(t, { 'README.md': '# alpha\n', 'backlog/.keep': '' });
  const beta = gitRepo(t, { 'README.md': '# beta\n', 'backlog/.keep': '' });
  const dir = tempDir(t);
  const state = path.join(dir, 'state');
  mkdirSync(state);
  const config = path.join(dir, 'registry.toml');
  writeFileSync(
    config,
    `[repos.alpha]\npath = "${alpha}"\nproxy_port = 700\n\n[repos.beta]\npath = "${beta}"\nproxy_port = 701\n`,
  );
  return { config, state };
}

/**
 * Starts the dashboard under a shell in the pane. When it exits the shell
 * prints its exit code and keeps the pane alive (cat), so the test can read
 * the terminal state the dashboard left behind.
 */
function startDashboard(tmux: Tmux, fixture: { config: string; state: string }): void {
  tmux.run(
    'new-session',
    '-d',
    '-x',
    '120',
    '-y',
    '30',
    '-s',
    'tui',
    '-c',
    ROOT,
    '-e',
    `AGENT_RUNNER_CONFIG=${fixture.config}`,
    '-e',
    `AGENT_RUNNER_STATE=${fixture.state}`,
    'sh',
    '-c',
    '"$0" "$1" tui --interval 1; echo "dashboard exited with $?"; exec cat',
    process.execPath,
    BIN,
  );
}

/** The dashboard's pid: the only child of the pane's shell. */
function dashboardPid(tmux: Tmux): number {
  const shell = tmux.pane('#{pane_pid}');
  return Number(readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim());
}

/** The terminal as the dashboard left it: normal screen, cursor shown, table gone, the shell went on. */
async function assertRestored(t: Test, tmux: Tmux): Promise<void> {
  const screen = await tmux.waitFor(
    'the shell after the dashboard',
    (text) => /^dashboard exited with \d+$/m.test(text),
    10_000,
  );
  t.match(screen, /^dashboard exited with 0$/m, 'exit code 0');
  t.notMatch(screen, /REPO +ON +WATCHER/, 'the dashboard is gone from the pane');
  t.equal(tmux.pane('#{alternate_on}'), '0', 'back on the normal screen');
  t.equal(tmux.pane('#{cursor_flag}'), '1', 'the cursor is visible again');
}

t.test('the dashboard under tmux: table, selection, quit', async (t) => {
  if (!mayRun(t)) return;
  const tmux = tmuxServer(t, 'keys');
  startDashboard(tmux, fleetFixture(t));

  const first = await tmux.waitFor(
    'both repos',
    (screen) => /^│alpha +yes +absent/m.test(screen) && /^│beta +yes +absent/m.test(screen),
  );
  t.match(first, /^agent-runner fleet: 2 repos, 0 running, 0 with problems {2}\(/m, 'the title counts the repos');
  t.match(
    first,
    /^│REPO {3}ON {3}WATCHER {2}BEAT {2}RUN {2}QUEUE {2}STAGING {2}READY {2}PARKED {2}LAST RUN {2}TODAY {2}ERR +│$/m,
    'column headers',
  );
  t.match(first, /^┌─ repos ─+┐$/m, 'box lines are drawn as Unicode, not as "lqqqk"');
  t.match(first, /^┌─ alpha ─+┐$/m, 'the first repo is selected');
  t.match(first, /^│staging {3}no auto\/work branch +│$/m);
  t.match(
    first,
    /^<enter> open {2}<\/> filter {2}<d> dispatch {2}<e> enqueue {2}<p> promote {2}<x> discard {2}<w> pause {2}<o> result {2}<\?> help {2}<q> quit$/m,
    'the footer names the keys, labelled',
  );
  t.match(first, /^read \d+s ago \(every 1s\) *$/m, 'the status has its own row when both do not fit');
  t.equal(tmux.pane('#{alternate_on}'), '1', 'the dashboard draws on the alternate screen');

  tmux.run('send-keys', '-t', 'tui', 'Down');
  const second = await tmux.waitFor('the details of beta', (screen) => /^┌─ beta ─+┐$/m.test(screen));
  t.match(
    second,
    new RegExp(`^│repo +\\S+ +user agent-beta +base main`, 'm'),
    'the details pane shows the second repo',
  );
  t.notMatch(second, /┌─ alpha ─/);

  tmux.run('send-keys', '-t', 'tui', 'Up');
  await tmux.waitFor('the details of alpha again', (screen) => /^┌─ alpha ─+┐$/m.test(screen));

  tmux.run('send-keys', '-t', 'tui', 'q');
  await assertRestored(t, tmux);
});

t.test('SIGTERM closes the dashboard and restores the terminal', async (t) => {
  if (!mayRun(t)) return;
  const tmux = tmuxServer(t, 'term');
  startDashboard(tmux, fleetFixture(t));
  await tmux.waitFor('the table', (screen) => /^│beta +yes/m.test(screen));
  const pid = dashboardPid(tmux);
  t.ok(pid > 1, `the dashboard runs as pid ${pid}`);
  process.kill(pid, 'SIGTERM');
  await assertRestored(t, tmux);
});

t.test('a fleet that cannot be read shows in the footer; the dashboard keeps running', async (t) => {
  if (!mayRun(t)) return;
  const tmux = tmuxServer(t, 'error');
  const fixture = fleetFixture(t);
  // A directory where the registry file should be: the read names it.
  startDashboard(tmux, { ...fixture, config: path.dirname(fixture.config) });
  const screen = await tmux.waitFor('the error in the footer', (text) => /cannot read the fleet: \S+: is a/.test(text));
  t.match(screen, /^cannot read the fleet: \S+: is a/m);
  tmux.run('send-keys', '-t', 'tui', 'r');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.match(tmux.screen(), /cannot read the fleet: \S+: is a/, 'still running after more failed reads');
  t.notMatch(tmux.screen(), /dashboard exited/);
  tmux.run('send-keys', '-t', 'tui', 'C-c');
  await assertRestored(t, tmux);
});
