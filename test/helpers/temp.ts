// Self-cleaning temp directories and real git repositories for tests.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Test } from 'tap';

/** A temp dir removed when the test ends, pass or fail. */
export function tempDir(t: Test, prefix = 'agent-runner-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Environment for git in tests: no user or system config, fixed identity. */
export const GIT_TEST_ENV: Record<string, string> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: GIT_TEST_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** Writes files (creating folders) relative to root. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const full = path.join(root, name);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** A git repo on main with the given files committed. */
export function gitRepo(t: Test, files: Record<string, string> = { 'README.md': '# test\n' }): string {
  const dir = tempDir(t, 'agent-runner-repo-');
  git(dir, 'init', '-q', '-b', 'main');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** A bare origin and a clone of it, both temp; the clone has the files committed and pushed. */
export function originAndClone(t: Test, files: Record<string, string>): { origin: string; clone: string } {
  const root = tempDir(t, 'agent-runner-origin-');
  const origin = path.join(root, 'origin.git');
  const clone = path.join(root, 'clone');
  git(root, 'init', '-q', '--bare', '-b', 'main', origin);
  git(root, 'clone', '-q', origin, clone);
  writeFiles(clone, files);
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '-m', 'initial');
  git(clone, 'push', '-q', 'origin', 'main');
  return { origin, clone };
}
