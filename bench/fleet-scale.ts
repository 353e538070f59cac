// Benchmark (not a test): `fleet --json` over a large registry.
//   node dist/bench/fleet-scale.js [--repos 1000] [--huge 10001] [--count 100]
//   BENCH_RUNS=N (default 3) runs of the 1,000-repo figures; the median is the figure.
// 1. --repos registered repos (links to a few real checkouts with a 20-task
//    board and its config.yml, auto/work one commit ahead; half of them with
//    packed refs, as a clone has), read three ways in the same run:
//    "baseline", a fresh state dir with no watcher status and no fleet cache
//    (every repo read from git, as a repo no watcher runs for is); "cold",
//    the first fleet read of a state dir whose watchers have ticked (each
//    repo's watch.json with the view its watcher keeps, written here by the
//    watcher's own code) but no fleet cache; "warm", the read after that.
//    Goals: cold <= 3 s and warm <= 5 s for 1,000 repos; all three must
//    answer the same repos.
// 2. --huge repos (0 skips it): must answer at all, every repo listed, no
//    EMFILE, under the default open-file limit (at most 1,023 are valid: a
//    proxy port is privileged and one per repo; the rest are listed with
//    their problem).
// 3. --count repos read in-process with the process port wrapped: the git
//    processes per repo, cold and warm.
// Runs 1 and 2 are the real CLI in a child process, as an operator runs it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTaskFile, taskFileName } from '../src/board/render.js';
import { realControlPorts } from '../src/io/wire.js';
import { gatherFleet } from '../src/control/fleet/fleet.js';
import { BoardSnapshot, readGitView } from '../src/control/repo-view/index.js';
import { writeWatchStatus } from '../src/control/watch/index.js';
import { defaultUserFor } from '../src/control/registry/parse.js';
import type { ProcessPort } from '../src/ports.js';
import { median, runsWanted } from './lib/stats.js';
import { isQuick, sized } from './lib/quick.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const REPOS = arg('repos', sized(1000, 20));
const HUGE = arg('huge', sized(10001, 200));
const COUNT = arg('count', sized(100, 5));
const GOAL_MS = 5000;
const COLD_GOAL_MS = 3000;
const CHECKOUTS = 8;
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
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * A few real checkouts with a 20-task board (and config) and auto/work one commit ahead; every other one with its refs
 * packed.
 */
function makeCheckouts(root: string): string[] {
  const dirs: string[] = [];
  for (let c = 0; c < CHECKOUTS; c++) {
    const dir = path.join(root, `checkout${c}`);
    mkdirSync(path.join(dir, 'backlog', 'tasks'), { recursive: true });
    // As `backlog init` leaves it: the folder's config is one more file the board read needs.
    writeFileSync(
      path.join(dir, 'backlog', 'config.yml'),
      'project_name: "bench"\nstatuses: ["To Do", "In Progress", "Done"]\n',
    );
    for (let i = 1; i <= 20; i++) {
      const fields = {
        id: `TASK-${i}`,
        title: `Task ${i}`,
        status: i % 2 ? 'To Do' : 'Done',
        createdDate: '2026-11-29 10:00',
      };
      writeFileSync(path.join(dir, 'backlog', 'tasks', taskFileName(fields.id, fields.title)), renderTaskFile(fields));
    }
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'tasks');
    git(dir, 'checkout', '-q', '-b', 'auto/work');
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'landed');
    git(dir, 'checkout', '-q', 'main');
    if (c % 2) git(dir, 'pack-refs', '--all');
    dirs.push(dir);
  }
  return dirs;
}

const linkOf = (root: string, count: number, r: number) => path.join(root, `links-${count}`, `r${r}`);

/**
 * Each repo's watch.json as its watcher leaves it after an idle tick: the view its board read made (watcher.ts
 * noteView, the same readGitView), read once per checkout: every link to it has the same objects and refs.
 */
async function writeWatcherViews(root: string, checkouts: readonly string[], count: number, state: string) {
  const ports = realControlPorts();
  const views = [];
  for (const checkout of checkouts) {
    const view = await readGitView(
      ports.process,
      new BoardSnapshot(ports.process, checkout, 'main'),
      checkout,
      'main',
      undefined,
    );
    if (!view) throw new Error(`no view of ${checkout}`);
    views.push(view);
  }
  const heartbeat = new Date().toISOString();
  for (let r = 0; r < count; r++) {
    const view = { ...views[r % checkouts.length]!, path: linkOf(root, count, r) };
    await writeWatchStatus(ports.fs, state, {
      repo: `r${r}`,
      state: 'idle',
      pid: 1,
      heartbeat,
      lastTick: heartbeat,
      view,
      // As a watcher writes it: the repo user's home, where fleet reads the drains run by hand (none here).
      runner: { user: defaultUserFor(`r${r}`), home: path.join(root, 'homes', `r${r}`) },
    });
  }
}

/** A registry of `count` repos, each at its own path: a link to one of the checkouts. */
function makeRegistry(root: string, checkouts: readonly string[], count: number): string {
  const links = path.join(root, `links-${count}`);
  mkdirSync(links);
  let text = '';
  for (let r = 0; r < count; r++) {
    const link = linkOf(root, count, r);
    symlinkSync(checkouts[r % checkouts.length]!, link);
    text += `[repos.r${r}]\npath = "${link}"\nproxy_port = ${1 + (r % 1023)}\n\n`;
  }
  const file = path.join(root, `registry-${count}.toml`);
  writeFileSync(file, text);
  return file;
}

interface FleetRun {
  readonly ms: number;
  readonly status: number | null;
  readonly repos: number;
  readonly stderr: string;
  /** The repos minus generatedAt: a warm read must answer exactly what the cold one did. */
  readonly body: string;
}

function fleet(registry: string, state: string): FleetRun {
  const started = performance.now();
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'agent-runner'), 'fleet', '--json'], {
    env: { PATH: '/usr/bin:/bin', AGENT_RUNNER_CONFIG: registry, AGENT_RUNNER_STATE: state },
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  let repos = -1;
  let body = '';
  try {
    const parsed = JSON.parse(result.stdout) as { repos: unknown[] };
    repos = parsed.repos.length;
    body = JSON.stringify(parsed.repos);
  } catch {
    // reported below
  }
  return { ms, status: result.status, repos, stderr: result.stderr.slice(0, 400), body };
}

interface InProcess {
  readonly perRepo: number;
  readonly ms: number;
  /** This process's CPU (user + system), without the git children's. */
  readonly cpuMs: number;
}

/** Git processes per repo, reading `count` repos in-process (cold: no cache yet; warm: the same state dir again). */
async function gitProcessesPerRepo(
  registry: string,
  state: string,
  count: number,
): Promise<{ cold: InProcess; warm: InProcess }> {
  const ports = realControlPorts();
  let calls = 0;
  const counting: ProcessPort = {
    ...ports.process,
    run: (command) => ((calls += command.program === 'git' ? 1 : 0), ports.process.run(command)),
  };
  const deps = { fs: ports.fs, process: counting, locks: ports.locks, scheduler: ports.scheduler };
  const pass = async (): Promise<InProcess> => {
    calls = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await gatherFleet(deps, registry, state, Date.now());
    const used = process.cpuUsage(cpu);
    return { perRepo: calls / count, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
  };
  const cold = await pass();
  return { cold, warm: await pass() };
}

const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-fleet-scale-'));
let broken = false;
try {
  const checkouts = makeCheckouts(root);
  console.log(`fleet-scale: load average ${load()} at start`);
  if (COUNT > 0) {
    const state = path.join(root, 'state-count');
    mkdirSync(state);
    const { cold, warm } = await gitProcessesPerRepo(makeRegistry(root, checkouts, COUNT), state, COUNT);
    const line = (pass: InProcess) =>
      `${pass.perRepo.toFixed(2)} git processes per repo, ${pass.ms.toFixed(0)} ms, node CPU ${pass.cpuMs.toFixed(0)} ms`;
    console.log(`in-process, ${COUNT} repos: cold ${line(cold)}; warm ${line(warm)}`);
  }
  if (REPOS > 0) {
    const registry = makeRegistry(root, checkouts, REPOS);
    const baseline: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let run = 0; run < runsWanted(3); run++) {
      // A state dir as `provision host` leaves it: no watcher has written a status, no fleet cache.
      const fresh = path.join(root, `state-${run}`);
      mkdirSync(fresh);
      // The same with every repo's watcher having ticked once.
      const watched = path.join(root, `state-watched-${run}`);
      mkdirSync(watched);
      await writeWatcherViews(root, checkouts, REPOS, watched);
      const reads = [
        ['baseline', fleet(registry, fresh)],
        ['cold', fleet(registry, watched)],
        ['warm', fleet(registry, watched)],
      ] as const;
      for (const [name, result] of reads) {
        if (result.status !== 0 || result.repos !== REPOS) {
          console.log(
            `fleet --json, ${REPOS} repos, ${name}: exit ${result.status}, ${result.repos} repos listed; stderr: ${result.stderr}`,
          );
          broken = true;
        }
      }
      // The watcher's status adds its heartbeat (whose age moves between reads); the board and staging must be the
      // same as read from git, and the rest the same from the cache as from the watcher's view.
      const facts = (body: string, keys: readonly string[]) =>
        JSON.stringify(
          (JSON.parse(body || '[]') as Record<string, unknown>[]).map((r) => keys.map((key) => r[key] ?? null)),
        );
      const all = ['name', 'board', 'staging', 'lastRun', 'queue', 'errors', 'spend'];
      if (
        facts(reads[0][1].body, ['board', 'staging']) !== facts(reads[1][1].body, ['board', 'staging']) ||
        facts(reads[1][1].body, all) !== facts(reads[2][1].body, all)
      ) {
        console.log(`fleet --json, ${REPOS} repos: the reads answered differently`);
        broken = true;
      }
      baseline.push(reads[0][1].ms);
      cold.push(reads[1][1].ms);
      warm.push(reads[2][1].ms);
      console.log(
        `  run ${run + 1}: baseline ${reads[0][1].ms.toFixed(0)} ms, cold ${reads[1][1].ms.toFixed(0)} ms, warm ${reads[2][1].ms.toFixed(0)} ms (load ${load()})`,
      );
    }
    const [b, c, w] = [median(baseline), median(cold), median(warm)];
    console.log(
      `fleet --json, ${REPOS} repos: baseline ${b.toFixed(0)} ms, cold ${c.toFixed(0)} ms, warm ${w.toFixed(0)} ms (medians of ${warm.length}); cold/baseline ${(c / b).toFixed(3)}, warm/cold ${(w / c).toFixed(2)}`,
    );
    if (!isQuick()) {
      console.log(
        `goal: ${REPOS} repos, cold, <= ${COLD_GOAL_MS} ms: ratio ${(c / COLD_GOAL_MS).toFixed(2)}, ${c <= COLD_GOAL_MS ? 'met' : 'NOT met'}`,
      );
      console.log(
        `goal: ${REPOS} repos, warm, <= ${GOAL_MS} ms: ratio ${(w / GOAL_MS).toFixed(2)}, ${w <= GOAL_MS ? 'met' : 'NOT met'}`,
      );
    }
  }
  if (HUGE > 0) {
    const registry = makeRegistry(root, checkouts, HUGE);
    const state = path.join(root, 'state-huge');
    mkdirSync(state);
    const run = fleet(registry, state);
    // The registry has problems (clashing ports): exit 2 after listing every repo is the answer.
    console.log(
      `fleet --json, ${HUGE} repos: ${run.ms.toFixed(0)} ms, exit ${run.status}, ${run.repos} repos listed${run.repos === HUGE ? '' : `; stderr: ${run.stderr}`}`,
    );
    if (run.repos !== HUGE) broken = true;
  }
  console.log(`fleet-scale: load average ${load()} at end`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exitCode = broken ? 1 : 0;
