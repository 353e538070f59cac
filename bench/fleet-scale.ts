// Benchmark (not a test): `fleet --json` over a large registry.
//   node dist/bench/fleet-scale.js [--repos 1000] [--huge 10001]
// 1. --repos registered repos (links to a few real checkouts with a board
//    and an auto/work branch): goal a few seconds (<= 5 s) for 1,000.
// 2. --huge repos (0 skips it): must answer at all, every repo listed, no
//    EMFILE, under the default open-file limit (at most 1,023 are valid: a
//    proxy port is privileged and one per repo; the rest are listed with
//    their problem).
// Each run is the real CLI in a child process, as an operator runs it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTaskFile, taskFileName } from '../src/board/render.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const REPOS = arg('repos', 1000);
const HUGE = arg('huge', 10001);
const CHECKOUTS = 8;
const GIT_ENV = { PATH: '/usr/bin:/bin', HOME: tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });

/** A few real checkouts with a 20-task board and auto/work one commit ahead. */
function makeCheckouts(root: string): string[] {
  const dirs: string[] = [];
  for (let c = 0; c < CHECKOUTS; c++) {
    const dir = path.join(root, `checkout${c}`);
    mkdirSync(path.join(dir, 'backlog', 'tasks'), { recursive: true });
    for (let i = 1; i <= 20; i++) {
      const fields = { id: `TASK-${i}`, title: `Task ${i}`, status: i % 2 ? 'To Do' : 'Done', createdDate: '2026-11-29 10:00' };
      writeFileSync(path.join(dir, 'backlog', 'tasks', taskFileName(fields.id, fields.title)), renderTaskFile(fields));
    }
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'tasks');
    git(dir, 'checkout', '-q', '-b', 'auto/work');
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'landed');
    git(dir, 'checkout', '-q', 'main');
    dirs.push(dir);
  }
  return dirs;
}

/** A registry of `count` repos, each at its own path: a link to one of the checkouts. */
function makeRegistry(root: string, checkouts: readonly string[], count: number): string {
  const links = path.join(root, `links-${count}`);
  mkdirSync(links);
  let text = '';
  for (let r = 0; r < count; r++) {
    const link = path.join(links, `r${r}`);
    symlinkSync(checkouts[r % checkouts.length]!, link);
    text += `[repos.r${r}]\npath = "${link}"\nproxy_port = ${1 + (r % 1023)}\n\n`;
  }
  const file = path.join(root, `registry-${count}.toml`);
  writeFileSync(file, text);
  return file;
}

function fleet(registry: string, state: string): { ms: number; status: number | null; repos: number; stderr: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'agent-runner'), 'fleet', '--json'], {
    env: { PATH: '/usr/bin:/bin', AGENT_RUNNER_CONFIG: registry, AGENT_RUNNER_STATE: state },
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  let repos = -1;
  try {
    repos = (JSON.parse(result.stdout) as { repos: unknown[] }).repos.length;
  } catch {
    // reported below
  }
  return { ms, status: result.status, repos, stderr: result.stderr.slice(0, 400) };
}

const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-fleet-scale-'));
try {
  const checkouts = makeCheckouts(root);
  const state = path.join(root, 'state');
  for (const count of [REPOS, HUGE].filter((n) => n > 0)) {
    const registry = makeRegistry(root, checkouts, count);
    const run = fleet(registry, state);
    const goal = count <= 1000 ? ` (goal <= 5000 ms, ratio ${(run.ms / 5000).toFixed(2)})` : '';
    console.log(`fleet --json, ${count} repos: ${run.ms.toFixed(0)} ms${goal}, exit ${run.status}, ${run.repos} repos listed${run.status === 0 && run.repos === count ? '' : `; stderr: ${run.stderr}`}`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
