// Benchmark (not a test): the watcher's cost over an idle fleet.
//   node dist/bench/fleet-tick.js [--repos 20] [--tasks 200] [--idle-sec 60]
// 1. One warm tick over every repo (registry read, queue listing, board
//    snapshot from git objects, cached by tree id): goal <= 150 ms in total.
// 2. `watch --all` idle for --idle-sec with every repo on a 1-minute schedule:
//    goal CPU <= 0.5 %, RSS <= 100 MB (needs root; skipped otherwise).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { realFs, realProcess } from '../src/io/real-ports.js';
import { cronScheduler } from '../src/io/cron.js';
import { readRegistry } from '../src/control/registry/parse.js';
import { Spool } from '../src/control/jobs/spool.js';
import { BoardSnapshot } from '../src/control/repo-view/board.js';
import { renderTaskFile, taskFileName } from '../src/board/render.js';
import { isQuick, sized } from './lib/quick.js';
import { FIRST_PROXY_PORT } from '../src/control/registry/proxy-ports.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const REPOS = arg('repos', sized(20, 3));
const TASKS = arg('tasks', sized(200, 20));
const IDLE_SEC = arg('idle-sec', sized(60, 3));
const GIT_ENV = {
  PATH: '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@x',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@x',
};
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });

function makeFleet(root: string): string {
  let registry = '';
  for (let r = 0; r < REPOS; r++) {
    const dir = path.join(root, `repo${r}`);
    mkdirSync(path.join(dir, 'backlog', 'tasks'), { recursive: true });
    for (let i = 1; i <= TASKS; i++) {
      const status = i % 3 === 0 ? 'To Do' : 'Done';
      const fields = {
        id: `TASK-${i}`,
        title: `Task number ${i}`,
        status, // Idle: the open tasks wait for a human, so nothing is ready and no tick starts a run.
        labels: status === 'To Do' ? ['risk:needs-human', ...(i % 7 === 0 ? ['area:api'] : [])] : [],
        dependencies: i > 1 && i % 5 === 0 ? [`TASK-${i - 1}`] : [],
        description: 'Benchmark task.\nSecond line.',
        createdDate: '2026-11-29 10:00',
      };
      writeFileSync(
        path.join(dir, 'backlog', 'tasks', taskFileName(fields.id, fields.title)),
        renderTaskFile(fields as Parameters<typeof renderTaskFile>[0]),
      );
    }
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'tasks');
    git(dir, 'branch', 'auto/work');
    registry += `[repos.bench${r}]\npath = "${dir}"\nproxy_port = ${FIRST_PROXY_PORT + r}\nuser = "nobody${r}"\n\n`;
  }
  const file = path.join(root, 'registry.toml');
  writeFileSync(file, registry);
  return file;
}

async function tick(registryFile: string, state: string, snapshots: Map<string, BoardSnapshot>): Promise<number> {
  const registry = await readRegistry({ fs: realFs, scheduler: cronScheduler }, registryFile);
  let ready = 0;
  await Promise.all(
    registry.repos.map(async (repo) => {
      await new Spool(realFs, state, repo.name).ids('queue');
      let snapshot = snapshots.get(repo.name);
      if (!snapshot) snapshots.set(repo.name, (snapshot = new BoardSnapshot(realProcess, repo.path, repo.baseBranch)));
      ready += (await snapshot.summary()).ready.length;
    }),
  );
  return ready;
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-bench-'));
try {
  const t0 = performance.now();
  const registryFile = makeFleet(root);
  console.log(`fleet: ${REPOS} repos x ${TASKS} tasks built in ${Math.round(performance.now() - t0)} ms`);
  const state = path.join(root, 'state');
  const snapshots = new Map<string, BoardSnapshot>();
  let start = performance.now();
  const ready = await tick(registryFile, state, snapshots);
  const cold = performance.now() - start;
  const warm: number[] = [];
  for (let i = 0; i < 10; i++) {
    start = performance.now();
    await tick(registryFile, state, snapshots);
    warm.push(performance.now() - start);
  }
  warm.sort((a, b) => a - b);
  const median = warm[5]!;
  console.log(`cold tick (every board parsed): ${cold.toFixed(1)} ms, ${ready} ready tasks`);
  const tickGoal = isQuick() ? '' : ` (goal <= 150 ms, ratio ${(median / 150).toFixed(2)})`;
  console.log(`idle tick, median of 10: ${median.toFixed(1)} ms${tickGoal}`);
  // Raw git floor: one cat-file --batch-check per repo, sequentially.
  start = performance.now();
  for (let r = 0; r < REPOS; r++)
    execFileSync('git', ['cat-file', '--batch-check'], {
      cwd: path.join(root, `repo${r}`),
      input: 'auto/work:backlog/tasks\n',
      env: GIT_ENV,
    });
  console.log(`raw git floor (one cat-file per repo, sequential): ${(performance.now() - start).toFixed(1)} ms`);

  if (process.getuid?.() !== 0 || IDLE_SEC <= 0) {
    console.log('idle watcher: skipped (needs root, and --idle-sec > 0)');
  } else {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'watch'), '--all'], {
      env: { PATH: '/usr/bin:/bin', AGENT_RUNNER_CONFIG: registryFile, AGENT_RUNNER_STATE: state },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (chunk) => (log += chunk));
    await new Promise((resolve) => setTimeout(resolve, 5000)); // start-up and the first tick
    const hz = 100;
    const before = cpuTicks(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SEC * 1000));
    const cpu = ((cpuTicks(child.pid!) - before) / hz / IDLE_SEC) * 100;
    const rss = rssMb(child.pid!);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('close', resolve));
    const goals = isQuick()
      ? ''
      : ` (goals CPU <= 0.5 %, ratio ${(cpu / 0.5).toFixed(2)}; RSS <= 100 MB, ratio ${(rss / 100).toFixed(2)})`;
    console.log(`idle watcher over ${IDLE_SEC} s: CPU ${cpu.toFixed(2)} %, RSS ${rss.toFixed(1)} MB${goals}`);
    const events = log
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { event: string }).event);
    console.log(`watcher events: ${[...new Set(events)].join(', ')}`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
