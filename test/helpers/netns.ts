// Network namespaces and throwaway users for the isolation system tests.
// Everything created here is removed in t.teardown, pass or fail: the
// namespace (and with it every nft table and address inside it), the user
// and its home, and the processes started in the namespace (ended by pid).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import type { Test } from 'tap';
import { inNetns, type CommandWrapper } from '../../backends/host/exec.js';

export interface Netns {
  readonly name: string;
  /** Wraps a Command so it runs inside the namespace (for the ports-based code). */
  readonly wrap: CommandWrapper;
  /** Runs argv inside the namespace and waits for it. */
  exec(argv: readonly string[], input?: string): { status: number | null; stdout: string; stderr: string };
  /** Starts a long-running argv inside the namespace; killed by pid in teardown. */
  start(argv: readonly string[]): ChildProcess;
}

function run(argv: readonly string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', input: input ?? '', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

/** A fresh namespace with loopback up (and optional extra addresses on lo). */
export function netns(t: Test, addresses: readonly string[] = []): Netns {
  const name = uniqueName('artest');
  const created = run(['ip', 'netns', 'add', name]);
  if (created.status !== 0) throw new Error(`ip netns add ${name}: ${created.stderr}`);
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    run(['ip', 'netns', 'del', name]);
  });
  const exec = (argv: readonly string[], input?: string) => run(['ip', 'netns', 'exec', name, ...argv], input);
  const up = exec(['ip', 'link', 'set', 'lo', 'up']);
  if (up.status !== 0) throw new Error(`lo up in ${name}: ${up.stderr}`);
  for (const address of addresses) {
    const added = exec(['ip', 'addr', 'add', address, 'dev', 'lo']);
    if (added.status !== 0) throw new Error(`ip addr add ${address} in ${name}: ${added.stderr}`);
  }
  return {
    name,
    wrap: inNetns(name),
    exec,
    start(argv) {
      const child = spawn('ip', ['netns', 'exec', name, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      return child;
    },
  };
}

export interface TestUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
}

/** A real user with its own group and home, deleted (with its home) in teardown. */
export function testUser(t: Test): TestUser {
  const name = uniqueName('artest');
  const added = run(['useradd', '--create-home', '--user-group', '--shell', '/bin/bash', name]);
  if (added.status !== 0) throw new Error(`useradd ${name}: ${added.stderr}`);
  t.teardown(() => {
    // --force: a leftover process of this user must not keep the account alive.
    run(['userdel', '--force', '--remove', name]);
  });
  const entry = run(['getent', 'passwd', name]).stdout.trim().split(':');
  return { name, uid: Number(entry[2]), gid: Number(entry[3]), home: entry[5]! };
}

/** Waits until a TCP port answers inside the namespace (servers we start). */
export async function waitForPort(ns: Netns, host: string, port: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const probe = ns.exec(['bash', '-c', `exec 3<>/dev/tcp/${host}/${port}`]);
    if (probe.status === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on ${host}:${port} in ${ns.name} after ${timeoutMs} ms`);
}

/**
 * Ends a daemonized Squid by pid: the master named in its pid file and the
 * kids it forked (found by parent pid). Nothing else is touched.
 */
/**
 * Kills a test's Squid (master and kids) and removes its shared-memory
 * segments (/dev/shm/<instance>-cf__*.shm): a Squid killed with SIGKILL
 * cannot unlink them itself, and they would pile up run after run.
 */
export function killSquidByPidFile(pidFile: string, instance: string): void {
  const text = run(['cat', pidFile]).stdout.trim();
  if (/^\d+$/.test(text)) {
    const master = Number(text);
    const kids = run(['pgrep', '-P', String(master)])
      .stdout.split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
    for (const pid of [master, ...kids]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  // A running Squid keeps what it mapped: unlinking is safe whether or not it has died yet.
  for (const name of readdirSync('/dev/shm'))
    if (name.startsWith(`${instance}-cf__`)) rmSync(path.join('/dev/shm', name), { force: true });
}
