// A git daemon on the host's loopback serving a folder of bare repos, like a
// real remote: git refuses a local path owned by another user ("dubious
// ownership"), so provisioning tests clone over git://. It runs in its own
// process group, and the whole group (git's wrapper and git-daemon) is ended
// when the test ends.
import { spawn, spawnSync } from 'node:child_process';
import type { Test } from 'tap';

export function gitDaemon(t: Test, baseDir: string): { url: (repo: string) => string; ready: () => Promise<void> } {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const daemon = spawn(
    'git',
    [
      'daemon',
      '--reuseaddr',
      '--export-all',
      `--base-path=${baseDir}`,
      '--listen=127.0.0.1',
      `--port=${port}`,
      baseDir,
    ],
    { stdio: 'ignore', detached: true },
  );
  t.teardown(() => {
    try {
      if (daemon.pid) process.kill(-daemon.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const url = (repo: string) => `git://127.0.0.1:${port}/${repo}`;
  return {
    url,
    async ready() {
      for (let attempt = 0; attempt < 50; attempt += 1) {
        if (spawnSync('git', ['ls-remote', url('origin.git')], { stdio: 'ignore' }).status === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`git daemon did not come up on ${url('origin.git')}`);
    },
  };
}
