// A repo ready to drain: a bare origin, a clone with a Backlog.md board, the
// bundled scripted agent as its command agent, and a runner for the real
// `agent-runner orchestrate` CLI against it.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdirSync, chmodSync, readFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { renderTaskFile, taskFileName, type TaskFileFields } from '../../src/board/render.js';
import { git, originAndClone, tempDir } from './temp.js';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const AGENT_RUNNER = path.join(PROJECT_ROOT, 'bin/agent-runner');
export const SCRIPTED_AGENT = path.join(PROJECT_ROOT, 'bin/scripted-agent');

export type FixtureTask = Omit<TaskFileFields, 'createdDate'>;

export interface DrainFixture {
  readonly origin: string;
  readonly clone: string;
  readonly state: string;
  readonly home: string;
  readonly env: Record<string, string>;
}

export const BLOCKED_CONFIG =
  'project_name: "test"\ndefault_status: "To Do"\nstatuses: ["To Do", "In Progress", "Blocked", "Done"]\nlabels: []\ndate_format: yyyy-mm-dd\n';

export const RED_ON_BROKEN_GATE =
  '#!/bin/sh\nif [ -e BROKEN ]; then echo "gate: BROKEN present: $(cat BROKEN)" >&2; exit 1; fi\necho "gate: ok"\n';

export function taskFiles(tasks: readonly FixtureTask[]): Record<string, string> {
  return Object.fromEntries(
    tasks.map((task) => [
      path.join('backlog/tasks', taskFileName(task.id, task.title)),
      renderTaskFile({ ...task, createdDate: '2026-11-29 10:00' }),
    ]),
  );
}

export function drainFixture(
  t: Test,
  tasks: readonly FixtureTask[],
  options: {
    config?: Record<string, unknown>;
    gates?: string;
    files?: Record<string, string>;
    agent?: readonly string[];
  } = {},
): DrainFixture {
  const config = {
    assistant: 'command',
    command: options.agent ?? [SCRIPTED_AGENT],
    maxParallel: 3,
    agentIdleTimeoutSec: 30,
    ...options.config,
  };
  const { origin, clone } = originAndClone(t, {
    'README.md': '# fixture\n',
    'backlog/config.yml': BLOCKED_CONFIG,
    '.agent/config.json': `${JSON.stringify(config, null, 2)}\n`,
    '.agent/gates.sh': options.gates ?? RED_ON_BROKEN_GATE,
    ...taskFiles(tasks),
    ...options.files,
  });
  chmodSync(path.join(clone, '.agent/gates.sh'), 0o755);
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '-m', 'gates executable');
  git(clone, 'push', '-q', 'origin', 'main');
  const root = tempDir(t, 'agent-runner-fixture-');
  const home = path.join(root, 'home');
  const state = path.join(root, 'state');
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Scripted Agent\n\temail = agent@example.invalid\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, AGENT_RUNNER_STATE: state, LANG: 'C.UTF-8' };
  return { origin, clone, state, home, env };
}

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly events: readonly Record<string, unknown>[];
}

/** Starts the real CLI; `detached` puts it in its own process group, so a test can kill the group. */
export function startOrchestrate(
  fixture: DrainFixture,
  args: readonly string[] = [],
  detached = false,
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(
    process.execPath,
    [AGENT_RUNNER, 'orchestrate', '--workspace', fixture.clone, '--json', '--progress', 'json', ...args],
    {
      env: fixture.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached,
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => {
      const events = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, signal, stdout, stderr, events });
    });
  });
  return { child, done };
}

export function runOrchestrate(fixture: DrainFixture, args: readonly string[] = []): Promise<CliRun> {
  return startOrchestrate(fixture, args).done;
}

export function runCli(fixture: DrainFixture, args: readonly string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [AGENT_RUNNER, ...args], {
    env: fixture.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, events: [] })),
  );
}

/** Landed task ids on a ref, oldest first, from the merge commits' trailers. */
export function landedOn(repo: string, ref: string, base = 'main'): string[] {
  const log = git(
    repo,
    'log',
    '--merges',
    '--reverse',
    '--format=%(trailers:key=Agent-Runner-Task,valueonly)',
    `${base}..${ref}`,
  );
  return log
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** A task's frontmatter status and labels as committed on a ref. */
export function taskOn(repo: string, ref: string, id: string, title: string): string {
  return git(repo, 'show', `${ref}:backlog/tasks/${taskFileName(id, title)}`);
}

export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function readJson(file: string): unknown {
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}
