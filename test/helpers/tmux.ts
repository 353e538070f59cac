// A tmux server for terminal tests: its own socket (no other tmux server is
// touched), a session named "tui", screen captures and a wait helper. The
// server is killed when the test ends.
import type { Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { missingTools } from './system.js';

export interface Tmux {
  run(...args: string[]): string;
  screen(): string;
  pane(format: string): string;
  waitFor(what: string, ok: (screen: string) => boolean, timeoutMs?: number): Promise<string>;
}

/** A tmux server on its own socket, killed when the test ends. */
export function tmuxServer(t: Test, name: string): Tmux {
  const socket = `agent-runner-tui-${name}-${process.pid}-${Date.now().toString(36)}`;
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8', TERM: 'xterm-256color' };
  delete env.TMUX;
  let server: { pid: number; socketPath: string } | undefined;
  const run = (...args: string[]) =>
    execFileSync('tmux', ['-u', '-f', '/dev/null', '-L', socket, ...args], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  t.teardown(() => {
    if (!server) return;
    try {
      run('kill-server');
    } catch {
      // kill-server failed: end this server by its pid, nothing else.
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // tmux leaves the socket file behind.
    rmSync(server.socketPath, { force: true });
  });
  const tmux: Tmux = {
    run: (...args) => {
      const out = run(...args);
      if (!server) {
        const [pid, socketPath] = run('display-message', '-p', '#{pid} #{socket_path}').trim().split(' ');
        server = { pid: Number(pid), socketPath: socketPath! };
      }
      return out;
    },
    screen: () => run('capture-pane', '-p', '-t', 'tui'),
    pane: (format) => run('display-message', '-p', '-t', 'tui', format).trim(),
    async waitFor(what, ok, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let screen = '';
      while (Date.now() < deadline) {
        screen = tmux.screen();
        if (ok(screen)) return screen;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      t.fail(`timed out waiting for ${what}; the pane shows:\n${screen}`);
      return screen;
    },
  };
  return tmux;
}

/** tmux must be there in CI; elsewhere the test skips with the reason. */
export function tmuxMayRun(t: Test): boolean {
  if (!missingTools(['tmux']).length) return true;
  if (process.env.CI === 'true') {
    t.fail('tmux is missing (CI must run the dashboard terminal tests): apt-get install tmux');
  } else {
    process.stderr.write(`SKIP ${t.name}: tmux is missing (apt-get install tmux)\n`);
    t.test('tmux is missing', { skip: 'tmux is missing' }, async () => undefined);
  }
  return false;
}
