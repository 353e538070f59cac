// The broker through real dispatches as root, inside a network namespace of the test's own (the broker, the agents
// and a fake provider all on its loopback): per-repo users, the broker dropped to agent-runner-broker holding the
// key files, and a command agent (a shell script run as `<user>-agent`) that goes for the key. Proven: the agent
// cannot read the key file, the broker's environ or memory, nor ptrace it, and finds the key nowhere in its env; a
// forged x-api-key never leaves the broker (the fake sees only the real key); a made-up token, a token kept from an
// earlier run and a live token presented from another uid are refused (401) and nothing of them is forwarded; a
// request past daily_tokens is refused mid-session, the drain stops for the day and the task waits uncharged; and
// root's ledger holds exactly the tokens the fake answered, also for a run whose orchestrate was killed (SIGKILL)
// mid-run; a broker killed mid-run stops its run, uncharged; a broker that cannot start fails the run, recorded.
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { systemTestMayRun } from '../helpers/system.js';
import { createRepoIdentities, createUser, startBin, type Finished } from '../helpers/control-fixture.js';
import { drainFixture, PROJECT_ROOT } from '../helpers/drain-fixture.js';
import { netns, type Netns } from '../helpers/netns.js';
import { tempDir } from '../helpers/temp.js';
import { useBrokerAccount } from '../helpers/broker-account.js';
import type { FakeProviderReport } from '../helpers/fake-provider-process.js';
import { identityNames } from '../../src/identities.js';
import { accountComment } from '../../src/control/repo-user/account.js';
import type { RunRecord } from '../../src/control/runs/index.js';

const REAL_KEY = 'sk-ant-api03-realBrokerKey0123456789abcdefghijklmnop';
const REAL_OPENAI_KEY = 'sk-proj-realBrokerKey0123456789abcdefghijklmnop';
const FORGED = 'sk-ant-api03-forgedByTheAgent000000000000000000000';
const MADE_UP = `arcap_${'Q'.repeat(43)}`;
const BROKER_PORT = 791;

/** `probe NAME COMMAND...`: one line `NAME<TAB>exit<TAB>first line of stderr` in $F. */
const PROBE = `probe() { name=$1; shift; err=$("$@" 2>&1 >/dev/null); code=$?; printf '%s\\t%s\\t%s\\n' "$name" "$code" "$(printf '%s' "$err" | head -n 1)" >> "$F"; }`;

/** One streamed Messages call through the broker with token $1 (and extra header $2): its HTTP status. */
const CALL = `call() {
  curl -s --noproxy '*' -o "$F.body" -w '%{http_code}' -X POST "$AGENT_RUNNER_BROKER_URL/v1/messages" \\
    -H "authorization: Bearer $1" \${2:+-H "$2"} -H 'content-type: application/json' -H 'anthropic-version: 2023-06-01' \\
    --data '{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
}`;

const PTRACE = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
result = libc.ptrace(16, int(sys.argv[1]), 0, 0)
sys.exit(0 if result == 0 else ctypes.get_errno())`;

function agentScript(p: { findings: string; keyFile: string; brokerUid: number; markers: string }): string {
  return `#!/bin/sh
mkdir -p '${p.findings}'
F='${p.findings}/'"$AGENT_TASK_ID"
: > "$F"
${PROBE}
${CALL}
say() { printf '%s\\t%s\\n' "$1" "$2" >> "$F"; }
done_task() {
  file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
  sed -i 's/^status: To Do$/status: Done/' "$file"
  echo "$AGENT_TASK_ID" >> done.txt
  git add -A
  git -c user.name=agent -c user.email=agent@example.invalid commit -q -m "$AGENT_TASK_ID done"
}
case "$AGENT_TASK_ID" in
TASK-1)
  probe cat-key cat '${p.keyFile}'
  BROKER=$(grep -l "^Uid:[[:space:]]*${p.brokerUid}[[:space:]]" /proc/[0-9]*/status 2>/dev/null | head -n 1 | cut -d/ -f3)
  say broker-found "$([ -n "$BROKER" ] && echo yes || echo no)"
  probe broker-environ cat "/proc/$BROKER/environ"
  probe broker-mem dd if="/proc/$BROKER/mem" bs=1 count=1 skip=4194304
  /usr/bin/python3 -c '${PTRACE.replace(/'/g, "'\\''")}' "$BROKER"
  say ptrace "$?"
  say key-in-env "$(env | grep -c -e '${REAL_KEY}' -e '${REAL_OPENAI_KEY}')"
  say token-shape "$(printf '%s' "$ANTHROPIC_AUTH_TOKEN" | grep -c '^arcap_')"
  say same-token "$([ "$ANTHROPIC_AUTH_TOKEN" = "$AGENT_RUNNER_BROKER_TOKEN" ] && echo yes || echo no)"
  say forged "$(call "$ANTHROPIC_AUTH_TOKEN" 'x-api-key: ${FORGED}')"
  say made-up "$(call '${MADE_UP}')"
  say plain "$(call "$ANTHROPIC_AUTH_TOKEN")"
  printf '%s' "$ANTHROPIC_AUTH_TOKEN" > '${p.markers}/kept-token'
  touch '${p.markers}/hold-for-root'
  i=0; while [ -e '${p.markers}/hold-for-root' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  done_task ;;
TASK-2)
  say kept "$(call "$(cat '${p.markers}/kept-token')")"
  say own "$(call "$AGENT_RUNNER_BROKER_TOKEN")"
  done_task ;;
TASK-3)
  say first "$(call "$AGENT_RUNNER_BROKER_TOKEN")"
  code=$(call "$AGENT_RUNNER_BROKER_TOKEN")
  say second "$code"
  if [ "$code" != 200 ]; then cat "$F.body" >&2; exit 1; fi
  done_task ;;
TASK-4)
  say first "$(call "$AGENT_RUNNER_BROKER_TOKEN")"
  say second "$(call "$AGENT_RUNNER_BROKER_TOKEN")"
  touch '${p.markers}/task-4-called'
  sleep 300 ;;
esac
`;
}

interface Setup {
  readonly ns: Netns;
  readonly name: string;
  readonly runner: string;
  readonly agentUid: number;
  readonly runnerUid: number;
  readonly state: string;
  readonly registry: string;
  readonly findings: string;
  readonly markers: string;
  readonly report: string;
  readonly keyFile: string;
  readonly brokerUid: number;
  readonly fake: { readonly pid: number; readonly origin: string };
}

async function setup(t: Test): Promise<Setup> {
  const ns = netns(t);
  const brokerUid = useBrokerAccount(t);
  const root = tempDir(t, 'agent-runner-broker-');
  chmodSync(root, 0o755);
  const keys = path.join(root, 'keys');
  mkdirSync(keys, { mode: 0o711 });
  chmodSync(keys, 0o711);
  const keyFile = path.join(keys, 'anthropic');
  const openaiKeyFile = path.join(keys, 'openai');
  for (const [file, key] of [
    [keyFile, REAL_KEY],
    [openaiKeyFile, REAL_OPENAI_KEY],
  ] as const) {
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    execFileSync('chown', [`${brokerUid}:${brokerUid}`, file]);
  }
  const markers = path.join(root, 'markers');
  mkdirSync(markers, { mode: 0o1777 });
  chmodSync(markers, 0o1777);
  const report = path.join(root, 'fake-report.json');
  const fakeChild = ns.start([
    process.execPath,
    path.join(PROJECT_ROOT, 'dist/test/helpers/fake-provider-process.js'),
    report,
  ]);
  const origin = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: fakeChild.stdout! });
    lines.once('line', resolve);
    fakeChild.once('exit', () => reject(new Error('the fake provider exited before it listened')));
  });
  const name = `brk${process.pid % 10000}`;
  const runner = `agent-${name}`;
  const names = identityNames(runner);
  const home = path.join(root, 'home');
  const findings = path.join(`${home}-agent`, 'findings');
  const scripts = path.join(root, 'scripts');
  mkdirSync(scripts, { mode: 0o755 });
  const agent = path.join(scripts, 'agent.sh');
  writeFileSync(agent, agentScript({ findings, keyFile, brokerUid, markers }), { mode: 0o755 });
  const fixture = drainFixture(
    t,
    ['Probes', 'A kept token', 'Over its budget', 'Killed mid-run'].map((title, i) => ({
      id: `TASK-${i + 1}`,
      title,
      status: 'To Do',
    })),
    { agent: ['/bin/sh', agent], config: { maxParallel: 1 }, gates: '#!/bin/sh\nexit 0\n' },
  );
  createUser(t, runner, home, name, accountComment(name));
  createRepoIdentities(t, runner, home, name);
  const repos = path.dirname(fixture.origin);
  execFileSync('chown', ['-R', `${runner}:${runner}`, repos]);
  chmodSync(repos, 0o755);
  const state = path.join(root, 'state');
  const registry = path.join(root, 'registry.toml');
  writeFileSync(
    registry,
    [
      `[repos.${name}]`,
      `path = "${fixture.clone}"`,
      `user = "${runner}"`,
      'proxy_port = 790',
      `broker_port = ${BROKER_PORT}`,
      'schedule = "* * * * *"',
      '',
      `[repos.${name}.broker]`,
      `anthropic_key_file = "${keyFile}"`,
      `anthropic_origin = "${origin}"`,
      `openai_key_file = "${openaiKeyFile}"`,
      `openai_origin = "${origin}"`,
      '',
    ].join('\n'),
  );
  const agentUid = Number(execFileSync('id', ['-u', names.agent], { encoding: 'utf8' }).trim());
  return {
    ns,
    name,
    runner,
    agentUid,
    runnerUid: Number(execFileSync('id', ['-u', runner], { encoding: 'utf8' }).trim()),
    state,
    registry,
    findings,
    markers,
    report,
    keyFile,
    brokerUid,
    fake: { pid: fakeChild.pid!, origin },
  };
}

/** bin/dispatch inside the namespace (the namespace is the network lock here; the egress rules are tested apart). */
function dispatch(s: Setup, args: readonly string[]): { pid: number; done: Promise<Finished> } {
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/root',
    AGENT_RUNNER_STATE: s.state,
    AGENT_RUNNER_CONFIG: s.registry,
    LANG: 'C.UTF-8',
  };
  const { child, done } = startBin(
    { env },
    'dispatch',
    [s.name, '--no-isolation', ...args],
    ['ip', 'netns', 'exec', s.ns.name],
  );
  return { pid: child.pid!, done };
}

function findingsOf(s: Setup, task: string): Record<string, string[]> {
  return Object.fromEntries(
    readFileSync(path.join(s.findings, task), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [name, ...rest] = line.split('\t');
        return [name!, rest];
      }),
  );
}

/** Waits for `what` while a dispatch runs: its end first is a failure that says what it printed. */
function waitWhile(run: Promise<Finished>, what: () => boolean, why: string): Promise<void> {
  return Promise.race([
    waitFor(what, 120_000, why),
    run.then((ended) => {
      throw new Error(
        `dispatch ended (${ended.code}) before ${why}: ${ended.stdout.slice(-1000)} ${ended.stderr.slice(-3000)}`,
      );
    }),
  ]);
}

async function waitFor(what: () => boolean, ms: number, why: string): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${why}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The broker's records in root's ledger, summed. */
function meteredTotals(s: Setup): {
  records: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
} {
  const dir = path.join(s.state, 'repos', s.name, 'ledger');
  const sum = { records: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  for (const file of existsSync(dir) ? readdirSync(dir) : [])
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      const record = JSON.parse(line) as Record<string, unknown>;
      if (record.source !== 'broker') continue;
      sum.records++;
      sum.input += Number(record.inputTokens ?? 0);
      sum.output += Number(record.outputTokens ?? 0);
      sum.cacheRead += Number(record.cacheReadTokens ?? 0);
      sum.cacheWrite += Number(record.cacheWriteTokens ?? 0);
    }
  return sum;
}

/** Ends the fake provider and reads what it received. */
async function fakeReport(s: Setup): Promise<FakeProviderReport> {
  process.kill(s.fake.pid, 'SIGTERM');
  await waitFor(() => existsSync(s.report), 10_000, 'the fake provider to write its report');
  return JSON.parse(readFileSync(s.report, 'utf8')) as FakeProviderReport;
}

/** The pid of a running process of `uid` whose argv holds `word` (any, without one), if there is one. */
function pidOf(uid: number, word?: string): number | undefined {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status) && (word === undefined || argv.includes(word)))
        return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

t.test('the broker through real dispatches: the key stays with it, tokens bind, the ledger is its', async (t) => {
  if (!systemTestMayRun(t, ['ip', 'setpriv', 'useradd', 'flock', 'curl', 'git', '/usr/bin/python3'])) return;
  const s = await setup(t);

  // Run 1: TASK-1 probes for the key; while it holds, a live token presented from root's uid is refused.
  const first = dispatch(s, ['--task', 'TASK-1']);
  await waitWhile(first.done, () => existsSync(path.join(s.markers, 'hold-for-root')), 'TASK-1 held');
  const live = readFileSync(path.join(s.markers, 'kept-token'), 'utf8');
  const fromRoot = s.ns.exec([
    'curl',
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-X',
    'POST',
    `http://127.0.0.1:${BROKER_PORT}/v1/messages`,
    '-H',
    `authorization: Bearer ${live}`,
    '-H',
    'content-type: application/json',
    '--data',
    '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[]}',
  ]);
  t.equal(fromRoot.stdout, '401', "a live token from another uid (root's) is refused at the peer check");
  execFileSync('rm', ['-f', path.join(s.markers, 'hold-for-root')]);
  const one = await first.done;
  t.equal(one.code, 0, `run 1 ends 0 (${one.stderr.slice(-800)})`);
  const f1 = findingsOf(s, 'TASK-1');
  t.match(f1['cat-key'], ['1', /Permission denied/], 'the agent cannot read the key file');
  t.same(f1['broker-found'], ['yes'], 'the agent found the broker process (its status is world-readable)');
  t.match(f1['broker-environ'], ['1', /Permission denied/], "nor the broker's environ");
  t.not(f1['broker-mem']?.[0], '0', "nor the broker's memory");
  t.same(f1.ptrace, ['1'], 'ptrace of the broker: EPERM');
  t.same(f1['key-in-env'], ['0'], 'no key in its environment');
  t.same(f1['token-shape'], ['1'], 'its ANTHROPIC_AUTH_TOKEN is a capability');
  t.same(f1['same-token'], ['yes']);
  t.same(f1.forged, ['200'], 'a forged x-api-key is replaced, the request served');
  t.same(f1['made-up'], ['401'], 'a made-up token is refused');
  t.same(f1.plain, ['200']);

  // Run 2: the token TASK-1 kept is dead with its run; the run's own works.
  const two = await dispatch(s, ['--task', 'TASK-2']).done;
  t.equal(two.code, 0, `run 2 ends 0 (${two.stderr.slice(-800)})`);
  t.same(findingsOf(s, 'TASK-2'), { kept: ['401'], own: ['200'] }, 'a token kept from an earlier run is refused');

  // Run 3: a daily token budget one token above what was spent: the first call goes, the second is refused.
  const spent = meteredTotals(s);
  const spentTokens = spent.input + spent.output + spent.cacheRead + spent.cacheWrite;
  writeFileSync(
    s.registry,
    readFileSync(s.registry, 'utf8').replace('broker_port', `daily_tokens = ${spentTokens + 1}\nbroker_port`),
  );
  const three = await dispatch(s, ['--task', 'TASK-3', '--json']).done;
  const f3 = findingsOf(s, 'TASK-3');
  t.same(f3.first, ['200'], 'under its budget, the first call is served');
  t.same(f3.second, ['400'], 'past daily_tokens, the next call is refused mid-session');
  const record3 = JSON.parse(three.stdout.slice(three.stdout.indexOf('{'))) as RunRecord;
  const task3 = record3.tasks?.find((task) => task.id === 'TASK-3');
  t.match(
    task3,
    { outcome: 'interrupted', reason: /daily token budget/ },
    `TASK-3 waits for the next day, uncharged (${JSON.stringify(task3)})`,
  );
  t.match(record3.budgetStop, /^over its daily token budget/, "the run stopped for the day in the broker's words");
  writeFileSync(s.registry, readFileSync(s.registry, 'utf8').replace(/daily_tokens = \d+\n/, ''));

  // Run 4: orchestrate is killed mid-run after two metered calls; the ledger still has them.
  const fourth = dispatch(s, ['--task', 'TASK-4']);
  await waitWhile(fourth.done, () => existsSync(path.join(s.markers, 'task-4-called')), 'TASK-4 made its calls');
  const orchestrate = pidOf(s.runnerUid, 'orchestrate');
  t.ok(orchestrate, 'orchestrate is running');
  if (orchestrate) process.kill(orchestrate, 'SIGKILL');
  const four = await fourth.done;
  t.not(four.code, 0, 'run 4 fails: its orchestrate was killed');
  t.same(findingsOf(s, 'TASK-4'), { first: ['200'], second: ['200'] });

  // Run 5: the broker is killed mid-run (once its two responses are in the ledger): the run is stopped, uncharged.
  rmSync(path.join(s.markers, 'task-4-called'));
  const before = meteredTotals(s).records;
  const fifth = dispatch(s, ['--task', 'TASK-4', '--json']);
  await waitWhile(fifth.done, () => meteredTotals(s).records === before + 2, 'run 5 metered two responses');
  const brokerPid = pidOf(s.brokerUid);
  t.ok(brokerPid, 'the broker is running');
  if (brokerPid) process.kill(brokerPid, 'SIGKILL');
  const five = await fifth.done;
  const record5 = JSON.parse(five.stdout.slice(five.stdout.indexOf('{'))) as RunRecord;
  t.match(
    record5,
    { status: 'interrupted', detail: 'the broker ended before the run did; the run was stopped' },
    'a broker lost mid-run stops the run, and its record says why',
  );
  t.match(five.stderr, /broker: the broker ended before the run did; the run is stopped/);
  t.match(
    record5.tasks?.find((task) => task.id === 'TASK-4'),
    { outcome: 'interrupted' },
    'its task uncharged',
  );

  // A key file others may read: the broker refuses to start, and so does the run, saying why.
  chmodSync(s.keyFile, 0o644);
  const refused = await dispatch(s, ['--task', 'TASK-4']).done;
  t.equal(refused.code, 2, 'a broker that cannot start fails the run (exit 2)');
  t.match(refused.stderr, /the broker for repo \S+ did not start: .*mode 0644.*chmod 600/);
  const failedRun = readdirSync(path.join(s.state, 'repos', s.name, 'runs'))
    .map((file) => JSON.parse(readFileSync(path.join(s.state, 'repos', s.name, 'runs', file), 'utf8')) as RunRecord)
    .find((record) => /did not start/.test(record.detail ?? ''));
  t.match(failedRun, { status: 'finished', outcome: 'error' }, 'and the run record says why');
  chmodSync(s.keyFile, 0o600);

  // The fake's own count against root's ledger, and the keys it saw.
  const report = await fakeReport(s);
  const metered = meteredTotals(s);
  t.equal(metered.records, report.requests.length, 'one ledger record per request the provider answered');
  t.same(
    { input: metered.input, output: metered.output, cacheRead: metered.cacheRead, cacheWrite: metered.cacheWrite },
    report.totals,
    "root's ledger holds exactly the tokens the provider answered, the killed run's included",
  );
  t.equal(report.requests.length, 8, 'served: 2 in run 1, 1 in run 2, 1 in run 3, 2 in run 4, 2 in run 5');
  t.ok(
    report.requests.every((request) => request.apiKey === REAL_KEY && request.authorization === null),
    'every request reached the provider with the real key alone',
  );
  t.notOk(JSON.stringify(report).includes(FORGED), 'the forged key never left the broker');
  t.notOk(JSON.stringify(report).includes('arcap_'), 'no capability reached the provider');
});
