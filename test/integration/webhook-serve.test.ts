// `agent-runner webhook serve`, the real CLI as a process: what it refuses
// (no webhook keys, a secret file others can read), and a receiver that
// listens on 127.0.0.1:webhook_port, answers a signed ping, and stops on
// SIGTERM. Root only (the command is root's, and the port is privileged).
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '@octokit/webhooks-methods';
import { skipWithReason } from '../helpers/system.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/agent-runner');

if (process.getuid?.() !== 0) {
  skipWithReason(t, 'webhook serve', 'needs root: a root command on a privileged port (CI runs it as root)');
} else {
  const root = mkdtempSync(path.join(tmpdir(), 'agent-runner-webhook-serve-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const secretFile = path.join(root, 'webhook-secret');
  writeFileSync(secretFile, 'a-secret-that-is-long-enough\n', { mode: 0o600 });
  const env = (registry: string) => {
    const file = path.join(root, `registry-${Math.random().toString(36).slice(2)}.toml`);
    writeFileSync(file, `${registry}[repos.web]\npath = "${root}/web"\nproxy_port = 700\n`);
    return { PATH: '/usr/bin:/bin', AGENT_RUNNER_CONFIG: file, AGENT_RUNNER_STATE: path.join(root, 'state') };
  };
  const run = (registry: string) =>
    spawnSync(process.execPath, [BIN, 'webhook', 'serve'], { env: env(registry), encoding: 'utf8' });

  t.test('without webhook_port and webhook_secret_file: exit 2, naming the keys', async (t) => {
    const result = run('');
    t.equal(result.status, 2);
    t.match(
      result.stderr,
      /defaults\.webhook_port: is not set: the receiver has no port and no secret; add webhook_port = 690 and webhook_secret_file/,
    );
  });

  t.test('a secret file others may read: exit 2 with the chmod', async (t) => {
    chmodSync(secretFile, 0o644);
    const result = run(`[defaults]\nwebhook_port = 690\nwebhook_secret_file = "${secretFile}"\n`);
    chmodSync(secretFile, 0o600);
    t.equal(result.status, 2);
    t.match(
      result.stderr,
      new RegExp(
        `defaults\\.webhook_secret_file: ${secretFile} is mode 0644: others may read the secret; chown root:root ${secretFile} && chmod 600 ${secretFile}`,
      ),
    );
  });

  t.test('serves a signed ping on 127.0.0.1 and stops on SIGTERM', async (t) => {
    // A free privileged port below the proxy pool, as the registry wants.
    let port = 0;
    for (let candidate = 650; candidate < 700 && port === 0; candidate++) {
      const probe = spawnSync('ss', ['-Hltn', `sport = :${candidate}`], { encoding: 'utf8' });
      if (probe.status === 0 && probe.stdout.trim() === '') port = candidate;
    }
    t.not(port, 0, 'a free port');
    const child = spawn(process.execPath, [BIN, 'webhook', 'serve'], {
      env: env(`[defaults]\nwebhook_port = ${port}\nwebhook_secret_file = "${secretFile}"\n`),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    t.teardown(() => void child.kill('SIGKILL'));
    for (let i = 0; i < 300 && !stderr.includes('webhook-listening'); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    t.match(stderr, new RegExp(`"event":"webhook-listening","host":"127.0.0.1","port":${port}`));
    const body = JSON.stringify({ zen: 'Design for failure.' });
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': 'ping-1',
        'x-hub-signature-256': await sign('a-secret-that-is-long-enough', body),
      },
      body,
    });
    t.equal(response.status, 200);
    t.match(await response.json(), { message: 'pong' });
    child.kill('SIGTERM');
    t.equal(await exited, 0);
    t.match(stderr, /"event":"webhook-stopped"/);
  });
}
