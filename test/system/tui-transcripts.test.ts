// The dashboard's transcript, search, key hints and whole errors in a real
// terminal: tmux runs `agent-runner tui` in a 120x32 pane, as root, on a
// registered repo whose user (made for the test, removed after) holds a
// transcript built from the recorded claude stream. The log tab shows it
// readable; `/` finds and highlights, n moves, G and g jump; a dispatch
// that fails on the missing egress lock wraps in the footer with its fix
// showing, and `o` opens the whole of it. The footer's keys are labelled.
import t from 'tap';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createUser } from '../helpers/control-fixture.js';
import { PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { systemTestMayRun } from '../helpers/system.js';
import { gitRepo, tempDir } from '../helpers/temp.js';
import { tmuxMayRun, tmuxServer } from '../helpers/tmux.js';
import { recordedTranscript } from '../helpers/transcript-fixture.js';
import { repoUserStateDir, transcriptFile } from '../../src/paths.js';

const BIN = path.join(PROJECT_ROOT, 'bin', 'agent-runner');

t.test('the log tab: a readable transcript, searched; a failed action wrapped and opened whole', async (t) => {
  if (!systemTestMayRun(t, ['useradd', 'setpriv']) || !tmuxMayRun(t)) return;
  const name = `tr${process.pid % 10000}x1`;
  const root = tempDir(t, 'agent-runner-transcripts-');
  chmodSync(root, 0o755);
  const home = path.join(root, 'home');
  createUser(t, `agent-${name}`, home, name);
  const clone = gitRepo(t, { 'README.md': '# transcripts\n', 'backlog/.keep': '' });
  const file = transcriptFile(repoUserStateDir(home), clone, '20260101T100000Z-aa', 'TASK-1');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    recordedTranscript('claude', ['claude-2.1-max-budget.documented.jsonl', 'claude-2.1-success.documented.jsonl']),
  );
  const state = path.join(root, 'state');
  mkdirSync(state);
  const registry = path.join(root, 'registry.toml');
  writeFileSync(registry, `[repos.${name}]\npath = "${clone}"\nuser = "agent-${name}"\nproxy_port = 709\n`);

  const tmux = tmuxServer(t, 'transcripts');
  tmux.run(
    'new-session',
    '-d',
    '-x',
    '120',
    '-y',
    '32',
    '-s',
    'tui',
    '-c',
    PROJECT_ROOT,
    '-e',
    `AGENT_RUNNER_CONFIG=${registry}`,
    '-e',
    `AGENT_RUNNER_STATE=${state}`,
    'sh',
    '-c',
    '"$0" "$1" tui --interval 1; echo "dashboard exited with $?"; exec cat',
    process.execPath,
    BIN,
  );
  const keys = (...names: string[]) => tmux.run('send-keys', '-t', 'tui', ...names);
  const fleet = await tmux.waitFor('the repo', (s) => new RegExp(`^│${name} +yes`, 'm').test(s));
  t.match(
    fleet,
    /^<enter> open {2}<\/> filter {2}<d> dispatch {2}<e> enqueue {2}<p> promote {2}<x> discard {2}<w> pause {2}<o> result/m,
    'labelled key hints',
  );

  // The log tab: the transcript as people read it.
  keys('Enter');
  await tmux.waitFor('the repo screen', (s) => /\[1 summary\]/.test(s));
  keys('4');
  const log = await tmux.waitFor('the transcript', (s) => /run ended: done/.test(s));
  t.match(log, /10:00:02 tool Bash: npm test/, 'a tool call with its input');
  t.match(log, /10:00:02 {3}Bash result: 1 failing/, 'its result, named');
  t.match(log, /result: success, 9 turns, 48\.2s; tokens 57 in .*cost \$0\.1834/, 'tokens and cost');
  t.notMatch(log, /"type":"assistant"/, 'no raw JSON');
  t.match(log, /^<\/> search {2}<n\/N> next\/prev {2}<g\/G> top\/end/m, "the log tab's keys");

  // Search: type, Enter, highlighted, n and N.
  keys('/');
  keys('-l', 'npm');
  await tmux.waitFor('the search being typed', (s) => /\/npm_ {2}\(Enter finds, Esc cancels\)/.test(s));
  keys('Enter');
  const found = await tmux.waitFor('the matches', (s) => /\/npm: 1 matching line\(s\); n next/.test(s));
  t.match(found, /tool Bash: npm test/);
  const coloured = tmux.run('capture-pane', '-p', '-e', '-t', 'tui');
  // The current match is drawn reversed (SGR 7) around exactly the matched text.
  const esc = '\u001b';
  t.match(
    coloured,
    new RegExp(`tool Bash: ${esc}\\[7m(${esc}\\[[0-9;]*m)*npm${esc}\\[0m`),
    'the current match is highlighted',
  );
  keys('/');
  keys('-l', 'result');
  keys('Enter');
  await tmux.waitFor('two matches', (s) => /\/result: 3 matching line\(s\)/.test(s));
  keys('n');
  keys('N');
  keys('G');
  keys('g');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.match(tmux.screen(), /\/result: 3 matching line\(s\)/, 'n, N, G and g keep the search');
  keys('Escape');
  await tmux.waitFor('the search cleared', (s) => !/matching line/.test(s));

  // A failed dispatch: the footer wraps the error so its fix shows; o opens all of it.
  keys('d');
  const failed = await tmux.waitFor('the failed dispatch', (s) => /dispatch \S+: failed \(exit 2\)/.test(s), 60_000);
  const footer = failed
    .split('\n')
    .filter((line) => line.trim())
    .slice(-4);
  t.ok(footer.length >= 2, 'the error takes more than one row');
  t.match(failed, /agent-runner doctor|--no-isolation|provision/, 'the fix is on screen');
  keys('o');
  const whole = await tmux.waitFor('the whole result', (s) => /agent-runner dispatch \S+: exit 2/.test(s));
  t.match(whole, /stderr/);
  t.match(whole, /stdout \(empty\)|stdout/);
  keys('Escape');
  await tmux.waitFor('the result closed', (s) => !/agent-runner dispatch \S+: exit 2/.test(s));
  keys('q');
  await tmux.waitFor('the dashboard gone', (s) => /^dashboard exited with 0$/m.test(s));
});
