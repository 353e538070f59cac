// Throwaway repositories for the drain benchmarks: a template repo (a few
// thousand files, a Backlog.md board, .agent/config.json, a green gate) built
// once, then a fresh bare origin + clone per measured run, all under one temp
// dir that is removed when the benchmark ends (or the process is interrupted).
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { renderTaskFile, taskFileName } from '../../src/board/render.js';

export interface BenchTask {
  readonly id: string;
  readonly title: string;
  readonly description: string;
}

export interface RepoSpec {
  /** Files in the repo in all (filler + board + config). */
  readonly totalFiles: number;
  readonly tasks: readonly BenchTask[];
  readonly agent: readonly string[];
  readonly maxParallel: number;
  /** The gates script (default: always green). */
  readonly gates?: string;
  /** More .agent/config.json keys (maxBatch, ...). */
  readonly config?: Readonly<Record<string, unknown>>;
}

export interface Copy {
  readonly origin: string;
  readonly clone: string;
  readonly state: string;
}

const BOARD_CONFIG =
  'project_name: "bench"\ndefault_status: "To Do"\nstatuses: ["To Do", "In Progress", "Done", "Blocked"]\nlabels: []\ndate_format: yyyy-mm-dd\n';
export const GREEN_GATE = '#!/bin/sh\ntrue\n';

/**
 * Where benchmark repos live: BENCH_TMPDIR, else /dev/shm (tmpfs) when it is
 * there, else the system temp dir. tmpfs by default because on a VM disk the
 * cost of creating files swings several-fold from minute to minute and drowns
 * what the benchmarks measure (the runner's own cost next to git's); it also
 * makes git as fast as it gets, so the runner's fixed costs weigh the most.
 */
export function benchTempBase(): string {
  if (process.env.BENCH_TMPDIR) return process.env.BENCH_TMPDIR;
  try {
    if (statSync('/dev/shm').isDirectory()) {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    }
  } catch {
    // no tmpfs here
  }
  return tmpdir();
}

/** The filesystem type of a directory (tmpfs, ext2/ext3, ...), for the record. */
export function filesystemOf(dir: string): string {
  try {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** One temp root for a benchmark; every path the benchmark creates lives under it. */
export class Sandbox {
  readonly root: string;
  readonly home: string;
  readonly env: Record<string, string>;
  private copies = 0;
  private readonly cleanupOnExit = () => this.cleanup();
  private readonly cleanupOnSignal = (signal: NodeJS.Signals) => {
    try {
      // Children in the same process group die with us and may still be writing: give them a moment.
      execFileSync('sleep', ['0.5']);
      this.cleanup();
    } finally {
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
  };

  constructor(prefix: string) {
    this.root = mkdtempSync(path.join(benchTempBase(), prefix));
    this.home = path.join(this.root, 'home');
    mkdirSync(this.home, { recursive: true });
    writeFileSync(path.join(this.home, '.gitconfig'), '[user]\n\tname = Bench Agent\n\temail = agent@bench.invalid\n');
    this.env = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: this.home,
      LANG: 'C.UTF-8',
      GIT_CONFIG_NOSYSTEM: '1',
    };
    process.once('exit', this.cleanupOnExit);
    process.once('SIGINT', this.cleanupOnSignal);
    process.once('SIGTERM', this.cleanupOnSignal);
  }

  git(cwd: string, ...args: string[]): string {
    return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], {
      cwd,
      env: this.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  }

  /** Writes an executable file under the sandbox and returns its path. */
  script(name: string, text: string): string {
    const file = path.join(this.root, 'bin', name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    chmodSync(file, 0o755);
    return file;
  }

  /** Builds the template repository once; returns the bare template's path. */
  template(spec: RepoSpec, name = 'template'): string {
    const work = path.join(this.root, `${name}-work`);
    const bare = path.join(this.root, `${name}.git`);
    mkdirSync(work, { recursive: true });
    this.git(work, 'init', '-q', '-b', 'main');
    const files = repoFiles(spec);
    for (const [file, text] of Object.entries(files)) {
      const full = path.join(work, file);
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, text);
    }
    chmodSync(path.join(work, '.agent/gates.sh'), 0o755);
    this.git(work, 'add', '-A');
    this.git(work, 'commit', '-q', '-m', 'bench repository');
    this.git(this.root, 'clone', '-q', '--bare', work, bare);
    rmSync(work, { recursive: true, force: true });
    return bare;
  }

  /** A fresh bare origin and a clone of it, as a drain finds a registered repo. */
  copy(template: string): Copy {
    const dir = path.join(this.root, `run-${++this.copies}`);
    mkdirSync(dir);
    const origin = path.join(dir, 'origin.git');
    const clone = path.join(dir, 'clone');
    this.git(dir, 'clone', '-q', '--bare', '--no-hardlinks', template, origin);
    this.git(dir, 'clone', '-q', origin, clone);
    return { origin, clone, state: path.join(dir, 'state') };
  }

  /** Removes one run's copy (its worktrees live beside the clone, in the same dir). */
  discard(copy: Copy): void {
    rmSync(path.dirname(copy.clone), { recursive: true, force: true });
  }

  /** Where this sandbox lives and on what filesystem, for the notes. */
  where(): string {
    return `repos under ${path.dirname(this.root)} (${filesystemOf(this.root)})`;
  }

  cleanup(): void {
    process.off('exit', this.cleanupOnExit);
    process.off('SIGINT', this.cleanupOnSignal);
    process.off('SIGTERM', this.cleanupOnSignal);
    rmSync(this.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

/** Filler source files, then the board and the agent config, ~spec.totalFiles in all. */
export function repoFiles(spec: RepoSpec): Record<string, string> {
  const files: Record<string, string> = {
    'README.md': '# bench\n',
    'backlog/config.yml': BOARD_CONFIG,
    '.agent/config.json': `${JSON.stringify({ assistant: 'command', command: spec.agent, maxParallel: spec.maxParallel, agentIdleTimeoutSec: 60, ...spec.config }, null, 2)}\n`,
    '.agent/gates.sh': spec.gates ?? GREEN_GATE,
  };
  for (const task of spec.tasks) {
    files[path.join('backlog/tasks', taskFileName(task.id, task.title))] = renderTaskFile({
      id: task.id,
      title: task.title,
      createdDate: '2026-01-01 10:00',
      description: task.description,
    });
  }
  const filler = Math.max(0, spec.totalFiles - Object.keys(files).length);
  for (let index = 0; index < filler; index++) {
    const dir = `src/module-${String(Math.floor(index / 50)).padStart(2, '0')}`;
    files[`${dir}/file-${String(index).padStart(4, '0')}.ts`] =
      `// filler ${index}\nexport const value${index} = ${index};\n`.repeat(4);
  }
  return files;
}

export function benchTasks(count: number, description: (id: string, index: number) => string): BenchTask[] {
  return Array.from({ length: count }, (_, index) => {
    const id = `TASK-${index + 1}`;
    return { id, title: `Write file ${index + 1}`, description: description(id, index + 1) };
  });
}

/**
 * The cheapest possible agent, as cheap as the shell baseline's own work:
 * set the task Done, write one file, commit. Optional sleep first (seconds).
 */
export function tinyAgentScript(sleepSeconds = 0): string {
  return [
    '#!/bin/sh',
    'set -e',
    ...(sleepSeconds > 0 ? [`sleep ${sleepSeconds}`] : []),
    'id=$(printf %s "$AGENT_TASK_ID" | tr A-Z a-z)',
    'for f in backlog/tasks/"$id"\\ -\\ *.md; do task=$f; done',
    'sed -i \'s/^status: To Do$/status: Done/\' "$task"',
    'mkdir -p out',
    'printf \'%s\\n\' "$AGENT_TASK_ID" > "out/$id.txt"',
    'git add -A',
    'git commit -q -m "$AGENT_TASK_ID: done"',
    '',
  ].join('\n');
}
