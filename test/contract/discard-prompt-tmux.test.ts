// discard asks on a real terminal: tmux runs `agent-runner discard` in a pane
// on a drained checkout; the test reads the question and the list of what
// goes with capture-pane, answers with send-keys, and checks auto/work: after
// "n" nothing moved (exit 1, "nothing changed"), after "y" it is reset to the
// base (exit 0). Each test has its own tmux socket, killed in teardown.
import t from 'tap';
import { AGENT_RUNNER, drainFixture, runOrchestrate, type DrainFixture } from '../helpers/drain-fixture.js';
import { git } from '../helpers/temp.js';
import { tmuxMayRun as mayRun, tmuxServer, type Tmux } from '../helpers/tmux.js';

/** discard in the pane, under a shell that prints its exit code and keeps the pane (cat). */
function startDiscard(tmux: Tmux, fixture: DrainFixture): void {
  tmux.run(
    'new-session',
    '-d',
    '-x',
    '200',
    '-y',
    '40',
    '-s',
    'tui',
    ...Object.entries(fixture.env).flatMap(([key, value]) => ['-e', `${key}=${value}`]),
    'sh',
    '-c',
    '"$0" "$1" discard --workspace "$2"; echo "discard exited with $?"; exec cat',
    process.execPath,
    AGENT_RUNNER,
    fixture.clone,
  );
}

/** The pane with wrapped lines joined. */
const joined = (tmux: Tmux) => tmux.run('capture-pane', '-p', '-J', '-t', 'tui');

async function waitForJoined(tmux: Tmux, what: string, ok: (screen: string) => boolean): Promise<string> {
  const deadline = Date.now() + 30_000;
  let screen = '';
  while (Date.now() < deadline) {
    screen = joined(tmux);
    if (ok(screen)) return screen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.fail(`timed out waiting for ${what}; the pane shows:\n${screen}`);
  return screen;
}

t.test('discard on a terminal: the list, then n changes nothing and y discards', async (t) => {
  if (!mayRun(t)) return;
  const fixture = drainFixture(t, [
    { id: 'TASK-1', title: 'Add alpha', description: 'agent: write alpha.txt "alpha"' },
  ]);
  t.equal((await runOrchestrate(fixture)).code, 0, 'the drain lands TASK-1');
  const staging = git(fixture.clone, 'rev-parse', 'auto/work');
  const base = git(fixture.origin, 'rev-parse', 'main');
  t.not(staging, base, 'auto/work is ahead');

  const no = tmuxServer(t, 'discard-no');
  startDiscard(no, fixture);
  const question = `discard ${fixture.clone}? y / n`;
  const asked = await waitForJoined(no, 'the question', (screen) => screen.includes(question));
  t.match(asked, /auto\/work is reset to main; its \d+ commit\(s\) ahead are dropped, with every task branch/);
  t.match(asked, /^ {2}TASK-1 {2}[0-9a-f]{10} {2}/m, 'the landed task is listed');
  no.run('send-keys', '-t', 'tui', 'n', 'Enter');
  const declined = await waitForJoined(no, 'the exit', (screen) => /discard exited with \d+/.test(screen));
  t.match(declined, /^discard: nothing changed$/m);
  t.match(declined, /^discard exited with 1$/m);
  t.equal(git(fixture.clone, 'rev-parse', 'auto/work'), staging, 'n: auto/work did not move');
  t.equal(git(fixture.origin, 'rev-parse', 'auto/work'), staging, 'n: nor did the published one');

  const yes = tmuxServer(t, 'discard-yes');
  startDiscard(yes, fixture);
  await waitForJoined(yes, 'the question', (screen) => screen.includes(question));
  yes.run('send-keys', '-t', 'tui', 'y', 'Enter');
  const done = await waitForJoined(yes, 'the exit', (screen) => /discard exited with \d+/.test(screen));
  t.match(done, /^auto\/work reset at main \([0-9a-f]{10}\), pushed; removed \d+ task branch\(es\)$/m);
  t.match(done, /^discard exited with 0$/m);
  t.equal(git(fixture.clone, 'rev-parse', 'auto/work'), base, 'y: auto/work is the base');
  t.equal(git(fixture.origin, 'rev-parse', 'auto/work'), base, 'y: and published');
});
