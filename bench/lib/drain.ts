// Runs the real `agent-runner orchestrate --drain` CLI against a bench copy
// and times it from spawn to exit, as an operator (or dispatch) would see it.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Copy } from './repo.js';
import { readCpu, underTime, type CpuTime } from './cpu.js';

/** The project root, from dist/bench/lib/. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const AGENT_RUNNER = path.join(PROJECT_ROOT, 'bin/agent-runner');
export const SCRIPTED_AGENT = path.join(PROJECT_ROOT, 'bin/scripted-agent');

export interface DrainEventLine {
  readonly event: string;
  readonly time: string;
  readonly taskId?: string;
}

export interface CliDrain {
  readonly seconds: number;
  /** CPU time of the CLI and everything it started; undefined without GNU time. */
  readonly cpu: CpuTime | undefined;
  readonly landed: number;
  readonly events: readonly DrainEventLine[];
}

export function runDrainCli(
  env: Readonly<Record<string, string>>,
  copy: Copy,
  expectLanded: number,
): Promise<CliDrain> {
  const report = path.join(path.dirname(copy.clone), 'cpu-usage');
  const command = underTime(
    [
      process.execPath,
      AGENT_RUNNER,
      'orchestrate',
      '--workspace',
      copy.clone,
      '--drain',
      '--json',
      '--progress',
      'json',
    ],
    report,
  );
  const started = process.hrtime.bigint();
  const child = spawn(command.program, command.args, {
    env: { ...env, AGENT_RUNNER_STATE: copy.state },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const events = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as DrainEventLine);
      const landed = events.filter((event) => event.event === 'task-landed').length;
      // A drain that did not land everything measured something else: refuse the figure.
      if (code !== 0 || landed !== expectLanded) {
        reject(
          new Error(
            `orchestrate exited ${code} with ${landed} of ${expectLanded} tasks landed in ${copy.clone}:\n${stderr.slice(-2000)}\n${stdout.slice(-500)}`,
          ),
        );
        return;
      }
      resolve({ seconds, cpu: readCpu(report), landed, events });
    });
  });
}

/** Seconds from the first task start to the last landing, from the drain's own events. */
export function taskSpan(events: readonly DrainEventLine[]): number {
  const starts = events.filter((event) => event.event === 'task-started').map((event) => Date.parse(event.time));
  const ends = events.filter((event) => event.event === 'task-landed').map((event) => Date.parse(event.time));
  return (Math.max(...ends) - Math.min(...starts)) / 1000;
}
