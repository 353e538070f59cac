// Benchmark (not a test): the delay from a push of a task to origin's base
// branch to its agent's start, on an idle watcher whose cron tick never fires
// (schedule once a year), so only the ls-remote poll, or the push webhook,
// can find the work.
//   node dist/bench/remote-pickup.js [--pushes 5] [--poll 1,15] [--no-webhook]
// For each poll interval, and with the webhook (`agent-runner webhook serve`
// beside the watcher, the poll an hour apart so only the webhook can find the
// work): --pushes tasks, one at a time, each pushed by the repo user to a
// bare origin; with the webhook the bench then posts GitHub's signed push
// delivery, as GitHub does right after a push. The agent (a shell script)
// records when it started; p50 and p95 of push to agent start. Also: what
// one idle check (ls-remote as the user) costs, the poll's price per idle
// repo and interval. The clone's origin is a GitHub URL that git rewrites to
// the local bare repository (url.<path>.insteadOf), as the receiver matches
// a push by its clone's origin.
// Needs root (the repo's runner, agent and gate users are created, as
// provisioning makes them, and removed); skipped otherwise.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTaskFile, taskFileName } from '../src/board/render.js';
import { accountComment } from '../src/control/repo-user/account.js';
import { identityNames } from '../src/identities.js';
import { planIdentities } from '../backends/host/provision-identities.js';
import { describeFailure } from '../backends/host/exec.js';
import { lsRemoteCommand } from '../src/control/watch/remote.js';
import { lookupUser } from '../src/control/repo-user/privdrop.js';
import { realProcess } from '../src/io/real-ports.js';
import { parseRegistry } from '../src/control/registry/parse.js';
import { cronScheduler } from '../src/io/cron.js';
import type { BenchFigure, BenchGoal, BenchResult } from './lib/types.js';
import { printResult } from './lib/print.js';
import { median, round } from './lib/stats.js';
import { isQuick, sized } from './lib/quick.js';
import { sign } from '@octokit/webhooks-methods';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
};
const PUSHES = Number(arg('pushes', String(sized(5, 1))));
const WEBHOOK = !process.argv.includes('--no-webhook');
const SECRET = 'bench-webhook-secret-0123456789abcdef';
const GITHUB_URL = (name: string) => `https://github.com/bench/${name}.git`;

/** p (0-100) of the values, nearest rank. */
const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

/** CPU time (user + system) of this process's reaped children, from /proc/self/stat (clock ticks of 10 ms). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // cutime and cstime are fields 16 and 17 of stat; after "pid (comm) " the list starts at field 3.
  return (Number(fields[16 - 3]) + Number(fields[17 - 3])) * 10;
}

/** A free privileged port below the proxy pool (the registry wants webhook_port privileged). */
function freeWebhookPort(): number {
  for (let port = 650; port < 700; port++) {
    const probe = spawnSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8' });
    if (probe.status === 0 && probe.stdout.trim() === '') return port;
  }
  throw new Error('no free port in 650-699 for the webhook receiver');
}

/** GitHub's push delivery for `after` on main of the bench repo, signed with the secret. */
async function deliverPush(port: number, after: string, id: string): Promise<void> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after,
    repository: {
      full_name: `bench/${NAME}`,
      html_url: `https://github.com/bench/${NAME}`,
      clone_url: GITHUB_URL(NAME),
    },
  });
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': `bench-${process.pid}-${id}`,
      'x-hub-signature-256': await sign(SECRET, body),
    },
    body,
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`the receiver answered ${response.status} to the push of ${id}: ${text}`);
}
const POLLS = arg('poll', isQuick() ? '1' : '1,15')
  .split(',')
  .map(Number);
const NAME = `rp${process.pid % 100000}`;
const USER = `agent-${NAME}`;
const IDENTITIES = identityNames(USER);

const AGENT = (out: string) => `#!/bin/sh
set -e
date +%s%3N > "${out}/start-$AGENT_TASK_ID"
file=$(grep -l "^id: $AGENT_TASK_ID$" backlog/tasks/*.md)
sed -i 's/^status: To Do$/status: Done/' "$file"
git add -A
git -c user.name=bench -c user.email=bench@example.invalid commit -q -m "$AGENT_TASK_ID done"
`;

/** The agent and gate of the repo and the hand-off folders, by provisioning's own steps (homes under /home). */
async function createIdentities(runnerHome: string): Promise<void> {
  const runner = await lookupUser(realProcess, USER);
  const none = { agent: undefined, gate: undefined, handoff: new Map() };
  for (const step of planIdentities({ name: NAME, user: USER }, runner, runnerHome, none, 1000)) {
    if (!('command' in step)) continue;
    const result = await realProcess.run(step.command);
    if (result.exitCode !== 0) throw new Error(`${step.description}: ${describeFailure(result)}`);
  }
}

/** Kills what `user` still runs (as the user: kill -1 reaches only its own) and deletes it with its home. */
function removeUser(user: string): void {
  // Never made (the run failed before it): nothing to remove.
  if (spawnSync('id', ['-u', user], { stdio: 'ignore' }).status !== 0) return;
  try {
    execFileSync(
      'setpriv',
      [`--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', 'kill', '-s', 'KILL', '--', '-1'],
      { stdio: 'ignore' },
    );
  } catch {
    // nothing left running
  }
  execFileSync('userdel', ['--remove', user], { stdio: 'ignore' });
}

/** Removes every one of `users`, then runs `after`, even when one could not be removed (that is thrown after). */
function removeUsers(users: readonly string[], after: () => void): void {
  const failures: unknown[] = [];
  for (const user of users) {
    try {
      removeUser(user);
    } catch (error) {
      failures.push(error);
    }
  }
  after();
  if (failures.length > 0) throw failures[0];
}

function asUser(cwd: string, home: string, ...args: string[]): string {
  const env = [
    `HOME=${home}`,
    'PATH=/usr/local/bin:/usr/bin:/bin',
    'GIT_CONFIG_NOSYSTEM=1',
    'GIT_AUTHOR_NAME=Team',
    'GIT_AUTHOR_EMAIL=team@example.invalid',
    'GIT_COMMITTER_NAME=Team',
    'GIT_COMMITTER_EMAIL=team@example.invalid',
  ];
  return execFileSync(
    'setpriv',
    [`--reuid=${USER}`, `--regid=${USER}`, '--init-groups', '--', 'env', '-i', ...env, ...args],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

function task(id: string, status: string): Record<string, string> {
  return {
    [path.join('backlog/tasks', taskFileName(id, `Task ${id}`))]: renderTaskFile({
      id,
      title: `Task ${id}`,
      status,
      createdDate: '2026-11-30 10:00',
    }),
  };
}

function write(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
}

/** Waits for `condition`; on timeout the error ends with what the watcher said last (`log`). */
async function waitFor(condition: () => boolean, timeoutMs: number, what: string, log = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      const said = log().trim().split('\n').slice(-8).join('\n');
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${said ? `; the watcher said last:\n${said}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function main(): Promise<BenchResult> {
  if (process.getuid?.() !== 0)
    return { benchmark: 'remote-pickup', figures: [], goals: [], notes: ['skipped: needs root (creates a repo user)'] };
  const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-bench-remote-'));
  chmodSync(root, 0o755);
  const home = path.join(root, 'home');
  const out = path.join(root, 'out');
  execFileSync(
    'useradd',
    [
      '--home-dir',
      home,
      '--create-home',
      '--shell',
      '/usr/sbin/nologin',
      '--user-group',
      '--comment',
      accountComment(NAME),
      USER,
    ],
    { stdio: 'pipe' },
  );
  let watcher: ChildProcess | undefined;
  let receiver: ChildProcess | undefined;
  try {
    mkdirSync(out, { mode: 0o777 });
    chmodSync(out, 0o777);
    writeFileSync(path.join(root, 'agent.sh'), AGENT(out), { mode: 0o755 });
    const origin = path.join(home, 'origin.git');
    const clone = path.join(home, NAME);
    const seed = path.join(home, 'seed');
    execFileSync('chown', ['-R', `${USER}:${USER}`, home]);
    await createIdentities(home);
    asUser(home, home, 'git', 'init', '-q', '--bare', '-b', 'main', origin);
    asUser(home, home, 'git', 'clone', '-q', origin, seed);
    write(seed, {
      'README.md': '# bench\n',
      'backlog/config.yml': 'project_name: "bench"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\n',
      '.agent/config.json': `${JSON.stringify({ assistant: 'command', command: ['/bin/sh', path.join(root, 'agent.sh')], maxParallel: 1, agentIdleTimeoutSec: 30 }, null, 2)}\n`,
      '.agent/gates.sh': '#!/bin/sh\nexit 0\n',
      ...task('TASK-1', 'Done'),
    });
    chmodSync(path.join(seed, '.agent/gates.sh'), 0o755);
    execFileSync('chown', ['-R', `${USER}:${USER}`, seed]);
    asUser(seed, home, 'git', 'add', '-A');
    asUser(seed, home, 'git', 'commit', '-q', '-m', 'board');
    asUser(seed, home, 'git', 'push', '-q', 'origin', 'main');
    asUser(home, home, 'git', 'clone', '-q', origin, clone);

    const user = (await lookupUser(realProcess, USER))!;
    // The clone's origin is GitHub's URL, rewritten by git to the bare repository: the receiver reads the URL.
    asUser(clone, home, 'git', 'config', `url.${origin}.insteadOf`, GITHUB_URL(NAME));
    asUser(clone, home, 'git', 'remote', 'set-url', 'origin', GITHUB_URL(NAME));
    const secretFile = path.join(root, 'webhook-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    const webhookPort = WEBHOOK ? freeWebhookPort() : 0;
    const registryText = (poll: number, webhook = false) =>
      (webhook ? `[defaults]\nwebhook_port = ${webhookPort}\nwebhook_secret_file = "${secretFile}"\n` : '') +
      `[repos.${NAME}]\npath = "${clone}"\nuser = "${USER}"\nproxy_port = 799\nschedule = "0 0 1 1 *"\nremote_poll_sec = ${poll}\n`;
    const repo = parseRegistry(registryText(1), 'registry.toml', cronScheduler).registry.repos[0]!;
    const checks: number[] = [];
    const checkCount = sized(20, 5);
    const cpuBefore = childrenCpuMs();
    for (let i = 0; i < checkCount; i++) {
      const started = process.hrtime.bigint();
      await realProcess.run(lsRemoteCommand(user, repo));
      checks.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const cpuPerCheck = (childrenCpuMs() - cpuBefore) / checkCount;
    const perHour = 3600 / 15;

    const figures: BenchFigure[] = [
      {
        name: 'one idle check (ls-remote as the repo user, local origin), wall',
        value: Math.round(median(checks)),
        unit: 'ms',
        runs: checks.map(Math.round),
      },
      {
        name: 'one idle check, CPU (setpriv, timeout, git and its transport)',
        value: round(cpuPerCheck, 1),
        unit: 'ms',
      },
      {
        name: `the poll's cost per idle repo at remote_poll_sec = 15 (${perHour} checks an hour), CPU`,
        value: round((cpuPerCheck * perHour) / 1000, 2),
        unit: 's/hour',
      },
    ];
    const goals: BenchGoal[] = [];
    const notes: string[] = [];
    let number = 1;
    const variants = [
      ...POLLS.map((poll) => ({ poll, webhook: false })),
      // The poll an hour apart: the webhook alone finds the work (a miss would time the bench out, not hide).
      ...(WEBHOOK ? [{ poll: 3600, webhook: true }] : []),
    ];
    for (const { poll, webhook } of variants) {
      const label = webhook ? 'webhook' : `poll-${poll}`;
      const state = path.join(root, `state-${label}`);
      const registry = path.join(root, `registry-${label}.toml`);
      writeFileSync(registry, registryText(poll, webhook));
      const env = {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: '/root',
        AGENT_RUNNER_STATE: state,
        AGENT_RUNNER_CONFIG: registry,
        LANG: 'C.UTF-8',
      };
      let stderr = '';
      if (webhook) {
        const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'agent-runner'), 'webhook', 'serve'], {
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        receiver = child;
        child.stderr!.on('data', (chunk) => (stderr += chunk));
        await waitFor(
          () => stderr.includes('"event":"webhook-listening"'),
          30_000,
          'the webhook receiver to start',
          () => stderr,
        );
      }
      // The pickup is what is measured: the host's egress lock and proxy are not (isolation-egress.test.ts is).
      const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'watch'), NAME, '--no-isolation'], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      watcher = child;
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      await waitFor(
        () => stderr.includes('"event":"watching"'),
        30_000,
        'the watcher to start',
        () => stderr,
      );
      const delays: number[] = [];
      for (let push = 0; push < PUSHES; push++) {
        const id = `TASK-${++number}`;
        const finishedBefore = stderr.split('"event":"run-finished"').length;
        // Pushes land at a random point of the poll interval, as real pushes do (within a second with the webhook).
        await new Promise((resolve) => setTimeout(resolve, Math.random() * (webhook ? 1 : poll) * 1000));
        write(seed, task(id, 'To Do'));
        execFileSync('chown', ['-R', `${USER}:${USER}`, seed]);
        asUser(seed, home, 'git', 'add', '-A');
        asUser(seed, home, 'git', 'commit', '-q', '-m', `file ${id}`);
        asUser(seed, home, 'git', 'pull', '-q', '--no-rebase', 'origin', 'main');
        asUser(seed, home, 'git', 'push', '-q', 'origin', 'main');
        const pushedAt = Date.now();
        if (webhook) await deliverPush(webhookPort, asUser(seed, home, 'git', 'rev-parse', 'HEAD').trim(), id);
        const startFile = path.join(out, `start-${id}`);
        await waitFor(
          () => existsSync(startFile) && readFileSync(startFile, 'utf8').trim() !== '',
          120_000,
          `the agent of ${id}`,
          () => stderr,
        );
        delays.push(Number(readFileSync(startFile, 'utf8').trim()) - pushedAt);
        await waitFor(
          () => stderr.split('"event":"run-finished"').length > finishedBefore,
          120_000,
          `the drain of ${id} to end`,
          () => stderr,
        );
      }
      for (const process of [child, receiver]) {
        if (!process) continue;
        process.kill('SIGTERM');
        await new Promise((resolve) => process.on('close', resolve));
      }
      watcher = undefined;
      receiver = undefined;
      const woken = stderr.split('"trigger":"wake"').length - 1;
      if (webhook && woken < PUSHES)
        throw new Error(`only ${woken} of ${PUSHES} pickups came from the webhook; the watcher said:\n${stderr}`);
      const what = webhook ? 'with the push webhook (poll 3600 s)' : `remote_poll_sec = ${poll}, no webhook`;
      const p50 = Math.round(median(delays));
      figures.push(
        { name: `push to agent start, ${what}, p50`, value: p50, unit: 'ms', runs: delays.map(Math.round) },
        { name: `push to agent start, ${what}, p95`, value: Math.round(percentile(delays, 95)), unit: 'ms' },
      );
      const target = webhook ? 5000 : poll * 1000 + 5000;
      goals.push({
        what: `push to agent start p50 (${what})`,
        target: `<= ${target} ms`,
        measured: p50,
        met: p50 <= target,
      });
    }
    notes.push(
      'without the webhook the delay is about half the poll interval on average (a push lands anywhere in it), plus one ls-remote, one fetch of the base, a board read and the drain start; with it, the delivery, the wake file noticed through inotify, then the same ls-remote, fetch, board read and drain start',
    );
    return { benchmark: 'remote-pickup', figures, goals, notes };
  } finally {
    watcher?.kill('SIGKILL');
    receiver?.kill('SIGKILL');
    removeUsers([IDENTITIES.agent, IDENTITIES.gate, USER], () => rmSync(root, { recursive: true, force: true }));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) printResult(await main());
