// Proven here, through real dispatches as root (real users, setpriv, the launcher over fd 3, bundles, no network
// isolation: these rows are about files and processes): the agent (a shell script run as `<user>-agent`) cannot
// read the runner's home, git token, state, clone or git dir (EACCES each), finds no credential that pushes in
// its own env, home or git, cannot write auto/work or any ref of the runner's; the config, hooks, fsmonitor,
// filter and alternates it plants in its own repository run only as the agent, never as the runner or root; the
// committed gates script runs as the gate, cannot read the token or write the runner's clone, and a process the
// agent left behind cannot write the runner's staging worktree (or the gate's checkout) while the gate runs, nor
// change the gate's verdict; after each run no process of the runner, agent or gate is left. Each row has its
// control: the runner reads its own token, the agent writes its own worktree and its planted programs do run
// when git runs them as the agent, and with the runner's home and staging opened on purpose the same probes
// read the planted file and write the staging worktree (and the gate, in its own checkout, stays green). Last, an
// agent that links its repository's objects/ to the runner's fails its own task, and later drains at their start,
// without anything of the runner's being read or changed.
import t, { type Test } from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import { systemTestMayRun } from '../helpers/system.js';
import {
  createRepoIdentities,
  createUser,
  landed,
  rootGit,
  runBin,
  type ControlFixture,
} from '../helpers/control-fixture.js';
import { drainFixture } from '../helpers/drain-fixture.js';
import { processesOfUid } from '../helpers/user-processes.js';
import { tempDir } from '../helpers/temp.js';
import { identityNames } from '../../src/identities.js';
import { accountComment } from '../../src/control/repo-user/account.js';
import { stagingWorktree } from '../../src/paths.js';
import type { RunRecord } from '../../src/control/runs/index.js';

const TOKEN = 'ghp_fakeRunnerToken0123456789abcdefABCD';
const uidOf = (user: string) => Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());

interface Places {
  readonly name: string;
  readonly runner: string;
  readonly agent: string;
  readonly gate: string;
  readonly home: string;
  readonly agentHome: string;
  readonly gateHome: string;
  readonly clone: string;
  readonly token: string;
  readonly staging: string;
  /** World-writable (sticky): planted programs, whoever runs them, leave `<program>-<uid>` files here. */
  readonly markers: string;
  /** The programs the agent plants (outside its home, so anyone could run them). */
  readonly programs: string;
  /** The agent's findings, one file per task, in its own home (0700): only it (and root) can write there. */
  readonly findings: string;
  /** The gate's findings, in its own home. */
  readonly gateFindings: string;
}

/** `probe NAME COMMAND...`: one line `NAME<TAB>exit<TAB>first line of stderr` in $F. */
const PROBE = `probe() { name=$1; shift; err=$("$@" 2>&1 >/dev/null); code=$?; printf '%s\\t%s\\t%s\\n' "$name" "$code" "$(printf '%s' "$err" | head -n 1)" >> "$F"; }`;

/** A program that records who ran it in `<markers>/<name>-<uid>`; as a filter it passes its input through. */
const marker = (markers: string, name: string) =>
  `#!/bin/sh\necho "${name} $(id -u)" >> '${markers}/${name}-'"$(id -u)"\n${name === 'filter' ? 'exec cat\n' : ''}`;

const PROGRAMS = ['fsmonitor', 'filter', 'packobjects'];
const HOOKS = ['post-checkout', 'pre-commit', 'post-commit', 'pre-push', 'reference-transaction', 'post-merge'];

/** The planted programs, world-readable and executable: anyone who ran them would leave a marker. */
function writePrograms(dir: string, markersDir: string): void {
  mkdirSync(path.join(dir, 'hooks'), { recursive: true, mode: 0o755 });
  for (const name of PROGRAMS) writeFileSync(path.join(dir, name), marker(markersDir, name), { mode: 0o755 });
  for (const hook of HOOKS)
    writeFileSync(path.join(dir, 'hooks', hook), marker(markersDir, `hook-${hook}`), { mode: 0o755 });
}

function agentScript(p: Places, background: string): string {
  const evil = p.programs;
  return `#!/bin/sh
mkdir -p '${p.findings}'
F='${p.findings}/'"$AGENT_TASK_ID"
: > "$F"
${PROBE}
# 1. The runner's places.
probe ls-home ls '${p.home}'
probe cat-token cat '${p.token}'
probe test-r-token test -r '${p.token}'
probe ls-state ls '${p.home}/.agent-runner'
probe ls-clone ls '${p.clone}'
probe ls-gitdir ls '${p.clone}/.git'
probe cat-git-config cat '${p.clone}/.git/config'
probe cat-planted cat '${p.home}/planted.txt'
# 2. Any credential that pushes: what it can list of the runner's and gate's homes, its env, home and git.
probe ls-gate-home ls -a '${p.gateHome}'
printf 'readable-in-homes\\t%s\\n' "$(find '${p.home}' '${p.gateHome}' 2>/dev/null | wc -l)" >> "$F"
printf 'token-in-env\\t%s\\n' "$(env | grep -c '${TOKEN}')" >> "$F"
printf 'token-in-home\\t%s\\n' "$(grep -rl '${TOKEN}' '${p.agentHome}' 2>/dev/null | wc -l)" >> "$F"
printf 'credential-fill\\t%s\\n' "$(printf 'protocol=https\\nhost=example.org\\n\\n' | GIT_TERMINAL_PROMPT=0 timeout 5 git credential fill 2>/dev/null | grep -c '^password=')" >> "$F"
# 3. The runner's refs.
probe append-auto-work sh -c "echo 0000000000000000000000000000000000000000 >> '${p.clone}/.git/refs/heads/auto/work'"
probe append-packed-refs sh -c "echo x >> '${p.clone}/.git/packed-refs'"
probe update-ref git -C '${p.clone}' update-ref refs/heads/auto/work HEAD
probe write-origin-ref git -C '${p.clone}' push -q origin HEAD:refs/heads/auto/work
# 4. Programs planted in its own repository and worktree; each leaves a marker naming the uid that ran it.
COMMON=$(cd "$(git rev-parse --git-common-dir)" && pwd)
mkdir -p "$COMMON/hooks"
for hook in '${evil}'/hooks/*; do cp "$hook" "$COMMON/hooks/"; done
git config core.fsmonitor '${evil}/fsmonitor'
git config core.hooksPath '${evil}/hooks'
git config uploadpack.packObjectsHook '${evil}/packobjects'
git config filter.evil.clean '${evil}/filter'
git config filter.evil.smudge '${evil}/filter'
echo '${p.clone}/.git/objects' >> "$COMMON/objects/info/alternates"
echo '* filter=evil' > .gitattributes
# The agent's own worktree is its to write (control).
echo "$AGENT_TASK_ID was here" > "agent-wrote-$AGENT_TASK_ID.txt"
# post-checkout and fsmonitor as the agent itself (expected, and the control that the planted programs work).
git switch -q --detach && git switch -q -
git status --short >/dev/null
# 5. A process left behind, in its own session, that goes for the staging worktree while the gate runs.
setsid /bin/sh '${background}' "$AGENT_TASK_ID" </dev/null >/dev/null 2>&1 &
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
git add -A
git -c user.name=agent -c user.email=agent@example.invalid commit -q -m "$AGENT_TASK_ID done"
# TASK-3: its repository's objects/ becomes a link to the runner's, for whatever reads it next.
if [ "$AGENT_TASK_ID" = TASK-3 ]; then
  mv "$COMMON/objects" "$COMMON/objects.own"
  ln -s '${p.clone}/.git/objects' "$COMMON/objects"
fi
`;
}

/** Waits for the gate to start, then tries the runner's staging worktree and the gate's checkouts. */
function backgroundScript(p: Places): string {
  return `#!/bin/sh
F='${p.findings}/'"$1-background"
: > "$F"
${PROBE}
i=0
while [ ! -e '${p.markers}/gate-running' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
printf 'saw-gate-running\\t%s\\n' "$([ -e '${p.markers}/gate-running' ] && echo yes || echo no)" >> "$F"
probe write-staging sh -c "echo broken > '${p.staging}/BROKEN'"
probe write-staging-readme sh -c "echo broken >> '${p.staging}/README.md'"
probe write-gate-candidates sh -c "echo broken > '${p.gateHome}/candidates/BROKEN'"
touch '${p.markers}/attacker-done'
sleep 600
`;
}

/** The committed gates script: records its uid, tries the runner's token and clone, and waits for the attacker. */
function gatesScript(p: Places): string {
  return `#!/bin/sh
F='${p.gateFindings}'
${PROBE}
printf 'uid\\t%s\\n' "$(id -u)" >> "$F"
probe cat-token cat '${p.token}'
probe write-clone sh -c "echo gate >> '${p.clone}/README.md'"
probe write-auto-work sh -c "echo 0 >> '${p.clone}/.git/refs/heads/auto/work'"
touch '${p.markers}/gate-running'
i=0
while [ ! -e '${p.markers}/attacker-done' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
printf 'attacker-done-while-gating\\t%s\\n' "$([ -e '${p.markers}/attacker-done' ] && echo yes || echo no)" >> "$F"
if [ -e BROKEN ]; then echo "gate: BROKEN present" >&2; exit 1; fi
echo "gate: ok"
`;
}

/** A registered repo as provisioning lays it out: the clone in the runner's home (0700), its agent and gate. */
function repoWithIdentities(t: Test) {
  const root = tempDir(t, 'agent-runner-boundaries-');
  chmodSync(root, 0o755);
  const name = `bnd${process.pid % 10000}`;
  const runner = `agent-${name}`;
  const names = identityNames(runner);
  const home = path.join(root, 'home');
  const clone = path.join(home, name);
  const p: Places = {
    name,
    runner,
    agent: names.agent,
    gate: names.gate,
    home,
    agentHome: `${home}-agent`,
    gateHome: `${home}-gate`,
    clone,
    token: path.join(home, '.git-credentials'),
    staging: stagingWorktree(clone),
    markers: path.join(root, 'markers'),
    programs: path.join(root, 'programs'),
    findings: path.join(`${home}-agent`, 'findings'),
    gateFindings: path.join(`${home}-gate`, 'gate-findings'),
  };
  mkdirSync(p.markers, { mode: 0o1777 });
  chmodSync(p.markers, 0o1777);
  writePrograms(p.programs, p.markers);
  const scripts = path.join(root, 'scripts');
  mkdirSync(scripts, { mode: 0o755 });
  const background = path.join(scripts, 'background.sh');
  writeFileSync(background, backgroundScript(p), { mode: 0o755 });
  const agent = path.join(scripts, 'agent.sh');
  writeFileSync(agent, agentScript(p, background), { mode: 0o755 });
  const fixture = drainFixture(
    t,
    [
      { id: 'TASK-1', title: 'Boundaries', status: 'To Do' },
      { id: 'TASK-2', title: 'Control', status: 'To Do' },
      { id: 'TASK-3', title: 'Linked objects', status: 'To Do' },
      { id: 'TASK-4', title: 'After the link', status: 'To Do' },
    ],
    { agent: ['/bin/sh', agent], config: { maxParallel: 1 }, gates: gatesScript(p) },
  );
  createUser(t, runner, home, name, accountComment(name));
  createRepoIdentities(t, runner, home, name);
  // The clone moves into the runner's home; its origin stays beside it, the runner's alone.
  const repos = path.dirname(fixture.origin);
  renameSync(fixture.clone, clone);
  execFileSync('chown', ['-R', `${runner}:${runner}`, repos, clone]);
  chmodSync(repos, 0o700);
  chmodSync(home, 0o700);
  asRunner(p, ['sh', '-c', `umask 077; echo 'https://bot:${TOKEN}@example.org' > '${p.token}'`]);
  asRunner(p, ['git', '-C', clone, 'config', 'credential.helper', 'store']);
  asRunner(p, ['git', '-C', clone, 'branch', 'auto/work']);
  // World-readable, in the runner's home: readable by the agent only if the home is opened (the control).
  asRunner(p, ['sh', '-c', `echo planted > '${home}/planted.txt'; chmod 0644 '${home}/planted.txt'`]);
  const state = path.join(root, 'state');
  const registry = path.join(root, 'registry.toml');
  writeFileSync(
    registry,
    `[repos.${name}]\npath = "${clone}"\nuser = "${runner}"\nproxy_port = 790\nschedule = "* * * * *"\n`,
  );
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/root',
    AGENT_RUNNER_STATE: state,
    AGENT_RUNNER_CONFIG: registry,
    LANG: 'C.UTF-8',
  };
  const control: ControlFixture = {
    name,
    user: runner,
    clone,
    origin: fixture.origin,
    state,
    registry,
    probeOut: p.markers,
    env,
  };
  return { p, control };
}

function asRunner(p: Places, args: string[]): string {
  return execFileSync(
    'setpriv',
    [
      `--reuid=${p.runner}`,
      `--regid=${p.runner}`,
      '--init-groups',
      '--',
      '/usr/bin/env',
      '-i',
      `HOME=${p.home}`,
      'PATH=/usr/bin:/bin',
      ...args,
    ],
    { cwd: '/', encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** The findings file as `name -> [exit, message]`. */
function findings(file: string): Record<string, string[]> {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, ...rest] = line.split('\t');
        return [name!, rest];
      }),
  );
}

/** Every marker a planted program left: `program uid`. */
function markers(dir: string): string[] {
  return readdirSync(dir)
    .filter((entry) => /-\d+$/.test(entry))
    .sort();
}

const DENIED = /Permission denied/;

if (systemTestMayRun(t, ['setpriv', 'useradd', 'userdel', 'git', 'setsid'])) {
  const { p, control } = repoWithIdentities(t);
  const uids = { runner: uidOf(p.runner), agent: uidOf(p.agent), gate: uidOf(p.gate) };
  const dispatch = async (t: Test, task: string) => {
    const result = await runBin(control, 'dispatch', ['--no-isolation', p.name, '--task', task, '--json']);
    t.equal(result.code, 0, result.code === 0 ? 'dispatch exits 0' : result.stderr);
    return JSON.parse(result.stdout) as RunRecord;
  };
  const nothingLeft = (t: Test) => {
    for (const [identity, uid] of Object.entries(uids))
      t.same(processesOfUid(uid), [], `no process of the ${identity} (uid ${uid}) survives the run`);
  };

  t.test('through a real dispatch the agent and the gate reach nothing of the runner’s', async (t) => {
    const run = await dispatch(t, 'TASK-1');
    t.match(run.tasks, [{ id: 'TASK-1', outcome: 'landed' }], 'the task lands: the gate said green');
    t.match(run.leftovers, { found: 2, survivors: [] }, 'the sweep ended what the agent left (its sh and sleep)');
    nothingLeft(t);
    const agent = findings(path.join(p.findings, 'TASK-1'));

    // 1. The runner's home, token, state, clone and git dir.
    for (const probe of ['ls-home', 'cat-token', 'ls-state', 'ls-clone', 'ls-gitdir', 'cat-git-config', 'cat-planted'])
      t.match(agent[probe], [/^[12]$/, DENIED], `${probe}: EACCES`);
    t.same(agent['test-r-token'], ['1', ''], 'test -r on the token: false');
    t.equal(asRunner(p, ['cat', p.token]).trim(), `https://bot:${TOKEN}@example.org`, 'control: the runner reads it');

    // 2. No credential that pushes.
    t.match(agent['ls-gate-home'], [/^2$/, DENIED], "the gate's home: EACCES");
    t.same(agent['readable-in-homes'], ['2'], "find lists only the two homes' own names, nothing in them");
    t.same(agent['token-in-env'], ['0'], 'the token is not in its env');
    t.same(agent['token-in-home'], ['0'], 'nor anywhere in its home');
    t.same(agent['credential-fill'], ['0'], 'git credential fill gives it no password');
    t.match(
      asRunner(p, [
        'sh',
        '-c',
        `printf 'protocol=https\\nhost=example.org\\n\\n' | git -C '${p.clone}' credential fill`,
      ]),
      `password=${TOKEN}`,
      'control: the runner’s git does give the runner the token',
    );

    // 3. The runner's refs.
    for (const probe of ['append-auto-work', 'append-packed-refs']) t.match(agent[probe], [/^[12]$/, DENIED], probe);
    for (const probe of ['update-ref', 'write-origin-ref'])
      t.match(agent[probe], [/^(128|1)$/, DENIED], `git -C <clone> ${probe}: fails`);
    t.same(landed(p.clone, 'auto/work'), ['TASK-1'], 'auto/work holds the landing and nothing else');
    t.same(landed(control.origin, 'auto/work'), ['TASK-1'], 'and so does the published branch');

    // 4. The programs it planted ran only as the agent: when its own git ran them (its commit, switch, status,
    // add with a filter), as expected. Neither the runner (landing, bundling, merging) nor root ran any of them.
    const left = markers(p.markers);
    t.same(
      left.filter((name) => !name.endsWith(`-${uids.agent}`)),
      [],
      `no marker from the runner (${uids.runner}), the gate (${uids.gate}) or root (0)`,
    );
    for (const expected of ['hook-pre-commit', 'hook-post-checkout', 'filter'])
      t.ok(left.includes(`${expected}-${uids.agent}`), `control: ${expected} ran when the agent's own git ran it`);
    t.equal(
      spawnSync('git', ['-C', p.clone, 'config', '--get-regexp', '^(core\\.(fsmonitor|hooksPath)|filter\\.)'], {
        env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1' },
      }).stdout.toString(),
      '',
      "the runner's repository got none of that config",
    );
    t.equal(
      rootGit(p.clone, 'show', 'auto/work:agent-wrote-TASK-1.txt'),
      'TASK-1 was here',
      'control: what the agent wrote in its own worktree landed',
    );

    // 5. The gate: its own uid, no token, no write to the runner's clone; the agent's leftover could not write the
    // staging worktree or the gate's checkouts while the gate ran, and the verdict stayed green.
    const gate = findings(p.gateFindings);
    t.same(gate.uid, [String(uids.gate)], 'the gates script ran as the gate');
    t.match(gate['cat-token'], ['1', DENIED], 'the gate cannot read the token');
    t.match(gate['write-clone'], [/^[12]$/, DENIED], "nor write the runner's clone");
    t.match(gate['write-auto-work'], [/^[12]$/, DENIED], "nor auto/work's ref");
    t.same(gate['attacker-done-while-gating'], ['yes'], 'the attacker tried while the gate ran');
    const background = findings(path.join(p.findings, 'TASK-1-background'));
    t.same(background['saw-gate-running'], ['yes'], 'the process the agent left saw the gate start');
    for (const probe of ['write-staging', 'write-staging-readme', 'write-gate-candidates'])
      t.match(background[probe], [/^[12]$/, DENIED], `${probe}: EACCES`);
    t.notOk(existsSync(path.join(p.staging, 'BROKEN')), 'nothing written in the staging worktree');
  });

  t.test('control: with the runner’s home and staging opened, the same probes get through', async (t) => {
    chmodSync(p.home, 0o755);
    t.teardown(() => existsSync(p.home) && chmodSync(p.home, 0o700));
    t.ok(existsSync(p.staging), 'the staging worktree the first run made');
    chmodSync(path.dirname(p.staging), 0o777);
    chmodSync(p.staging, 0o777);
    chmodSync(path.join(p.staging, 'README.md'), 0o666);
    rmSync(p.gateFindings, { force: true });
    rmSync(path.join(p.markers, 'gate-running'));
    rmSync(path.join(p.markers, 'attacker-done'));
    const run = await dispatch(t, 'TASK-2');
    t.match(run.tasks, [{ id: 'TASK-2', outcome: 'landed' }], 'the gate, in its own checkout, is still green');
    nothingLeft(t);
    const agent = findings(path.join(p.findings, 'TASK-2'));
    t.same(agent['ls-home'], ['0', ''], "the agent lists the runner's home");
    t.same(agent['cat-planted'], ['0', ''], 'and reads the world-readable file planted there');
    t.match(agent['cat-token'], ['1', DENIED], 'the token itself stays 0600');
    const background = findings(path.join(p.findings, 'TASK-2-background'));
    t.same(background['write-staging'], ['0', ''], 'the leftover process writes the opened staging worktree');
    t.same(background['write-staging-readme'], ['0', ''], 'and changes a file the runner tracks there');
    t.same(findings(p.gateFindings)['attacker-done-while-gating'], ['yes'], 'while the gate ran');
    t.notMatch(rootGit(p.clone, 'show', 'auto/work:README.md'), /broken/, 'what landed is what was gated');
  });

  t.test(
    'objects/ of its own repository linked to the runner’s: nothing of the runner’s is read or changed',
    async (t) => {
      chmodSync(p.home, 0o700);
      const auto = rootGit(p.clone, 'rev-parse', 'auto/work');
      const run = await dispatch(t, 'TASK-3');
      // Its first attempt fails in the agent's own repository, and so does its retry: parked, with git's words.
      t.match(
        run.tasks,
        [{ id: 'TASK-3', outcome: 'parked', reason: /the agent's .* failed/ }],
        'the task fails on its own side: the runner reads nothing through the link',
      );
      nothingLeft(t);
      t.same(
        rootGit(p.clone, 'log', '--format=%s', `${auto}..auto/work`).split('\n'),
        [rootGit(p.clone, 'log', '-1', '--format=%s', 'auto/work')].filter((subject) => /park/i.test(subject)),
        "auto/work gained only the runner's own park note",
      );
      t.same(
        markers(p.markers).filter((name) => !name.endsWith(`-${uids.agent}`)),
        [],
        'still no marker from the runner, the gate or root',
      );
      // The next drain makes the agent's repository anew: nothing the agent planted there outlives its drain.
      const next = await dispatch(t, 'TASK-4');
      t.match(next.tasks, [{ id: 'TASK-4', outcome: 'landed' }], 'the next drain starts from a fresh repository');
      nothingLeft(t);
    },
  );
}
