// Killing at a chosen point, for the crash-recovery tests: a git that hangs
// holding the lock it took (as a git killed mid-operation leaves it), the
// group kill, and what a kill left behind.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { waitFor } from './drain-fixture.js';
import { startTimeOf } from './user-processes.js';

/**
 * The pid a test's script wrote (`echo $$ > FILE`), once the file holds one:
 * it exists, empty, for a moment first, and Number('') is 0.
 */
export async function pidFrom(file: string, timeoutMs: number, what: string): Promise<number> {
  let pid = Number.NaN;
  await waitFor(
    () => {
      pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim() || Number.NaN) : Number.NaN;
      return Number.isInteger(pid) && pid > 1;
    },
    timeoutMs,
    what,
  );
  return pid;
}

export function killGroup(pid: number): void {
  // kill(-0) is kill(0): this test's own process group, and the test runner with it.
  if (!Number.isInteger(pid) || pid <= 1)
    throw new Error(`refusing to kill process group ${pid}: not a pid this test started`);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * killGroup for a teardown: only while the pid is still the process it was now, never a later process given the same
 * pid.
 */
export function killGroupIfSame(pid: number): () => void {
  const identity = startTimeOrUndefined(pid);
  return () => {
    if (identity !== undefined && startTimeOrUndefined(pid) === identity) killGroup(pid);
  };
}

/** For a teardown: SIGKILL to the one process `pid`, only while it is still the process it is now. */
export function killIfSame(pid: number): () => void {
  const identity = startTimeOrUndefined(pid);
  return () => {
    if (identity === undefined || startTimeOrUndefined(pid) !== identity) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  };
}

function startTimeOrUndefined(pid: number): string | undefined {
  try {
    return startTimeOf(pid);
  } catch {
    return undefined;
  }
}

/**
 * A git (in the returned bin dir, to put first on the PATH) that, for the
 * first `git SUBCOMMAND` while `control/hold` exists, runs `before` (shell,
 * in git's directory, with the real git as $REAL_GIT), takes `lock` (relative to that directory's git dir),
 * records its pid in `control/git-pid` and hangs; with `inDir`, only a git
 * running in a directory whose path ends so (the staging worktree, not an
 * agent's). Every other call is the real git.
 */
export function hangingGit(control: string, subcommand: string, lock: string, before = ':', inDir = ''): string {
  const bin = path.join(control, 'bin');
  mkdirSync(bin, { recursive: true });
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(bin, 'git'),
    [
      '#!/bin/sh',
      `REAL_GIT=${real}`,
      'for arg in "$@"; do',
      `  if [ "$arg" = ${subcommand} ] && [ -e ${control}/hold ] && case "$PWD" in *${inDir}) true;; *) false;; esac; then`,
      `    rm ${control}/hold`,
      `    ${before}`,
      `    : > "$(${real} rev-parse --absolute-git-dir)/${lock}"`,
      `    echo $$ > ${control}/git-pid`,
      '    exec sleep 300',
      '  fi',
      'done',
      `exec ${real} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(path.join(bin, 'git'), 0o755);
  writeFileSync(path.join(control, 'hold'), '');
  return bin;
}

/** Every git lock file under a git dir. */
export function gitLocksUnder(gitDir: string): string[] {
  return execFileSync('find', [gitDir, '-name', '*.lock', '-type', 'f'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}
