// The gate: the trusted gates script run over a merged tree, supervised like
// an agent (own process group, a timeout), its result kept as data (ok, a
// short detail, the output's tail). The script's path comes from auto/work's
// committed config (trusted-config.ts), never from the task being judged.
import * as path from 'node:path';
import type { Clock, FsPort, ProcessPort } from '../../ports.js';
import type { Git } from '../../git/git.js';
import type { TaskId } from '../../types.js';
import { superviseAgent } from '../../agent/supervise.js';
import { reportingProcess, type AgentProcessEvent } from '../../agent/run-task.js';
import type { GateResult } from '../verdict/index.js';
import type { StagingTip } from '../../staging/tip.js';

export interface IntegratorDeps {
  readonly process: ProcessPort;
  readonly fs: FsPort;
  readonly clock: Clock;
  readonly git: Git;
  /** auto/work as the runner last wrote it: every landing checks it and moves the branch from it. */
  readonly tip: StagingTip;
  /** The gate's process and its end, for the drain's records (a killed drain's gate is reaped by the next). */
  readonly onGateProcess?: (taskId: TaskId, event: AgentProcessEvent) => void | Promise<void>;
  /** Each run of the gates script, with the tasks it judged together. */
  readonly onGateRun?: (tasks: readonly TaskId[], gate: GateResult) => void;
  /** Where the gate runs: the gate identity's own checkout of the candidate (drain/sides.ts). */
  readonly gateSide: GateSide;
}

/** The gate identity: it checks a candidate out in its own repository and runs the script there. */
export interface GateSide {
  /** The folder where `commit` is checked out for the gate. */
  checkout(commit: string): Promise<string>;
  /** Runs the gate's commands as the gate identity. */
  readonly process: ProcessPort;
}

export interface GateSpec {
  /**
   * Repo-relative path of the gates script; undefined means no gates (every
   * merge is green). Taken from auto/work's committed config before any
   * merge (trusted-config.ts), never from a task's tree.
   */
  readonly script: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

const TAIL_LINES = 15;

/**
 * Runs the gates script over `candidate` (made only when a script is to run), the commit holding the tasks merged in
 * dir (the first names the gate's process record), as the gate identity in its own checkout: the script can write
 * neither the runner's repository nor an agent's tree, and what it says comes back as data. A missing or
 * non-executable script is red, never green.
 */
export async function runGate(
  deps: IntegratorDeps,
  dir: string,
  gate: GateSpec,
  tasks: readonly TaskId[],
  candidate: () => Promise<string>,
): Promise<GateResult> {
  const taskId = tasks[0]!;
  if (gate.script === undefined) return { ok: true, detail: 'no gates configured', tail: '', durationMs: 0 };
  // The runner's merged tree holds the same script (protected paths equal the trusted commit's): checked here.
  const stat = await deps.fs.stat(path.join(dir, gate.script));
  if (!stat)
    return {
      ok: false,
      detail: `gates script ${gate.script} does not exist`,
      tail: `gates script ${gate.script} does not exist; add it or set "gates" in .agent/config.json`,
      durationMs: 0,
    };
  if ((stat.mode & 0o111) === 0)
    return {
      ok: false,
      detail: `gates script ${gate.script} is not executable`,
      tail: `gates script ${gate.script} is not executable; chmod +x it and commit`,
      durationMs: 0,
    };
  const lines: string[] = [];
  const started = deps.clock.now();
  const checkout = await deps.gateSide.checkout(await candidate());
  const run = await superviseAgent(
    {
      process: reportingProcess(
        deps.gateSide.process,
        deps.onGateProcess && ((event) => deps.onGateProcess!(taskId, event)),
      ),
      clock: deps.clock,
    },
    {
      program: path.join(checkout, gate.script),
      args: [],
      env: { ...gate.env, AGENT_RUNNER_GATE: '1' },
      cwd: checkout,
    },
    { idleTimeoutMs: gate.timeoutMs, wallClockMs: gate.timeoutMs, killGraceMs: 5000 },
    (_stream, line) => {
      lines.push(line);
      if (lines.length > 200) lines.shift();
    },
  );
  const durationMs = deps.clock.now() - started;
  const tail = lines.slice(-TAIL_LINES).join('\n');
  const result: GateResult =
    run.endedBy !== 'exit'
      ? { ok: false, detail: `gates timed out (${run.endedBy})`, tail, durationMs }
      : run.exitCode !== 0
        ? { ok: false, detail: `gates exited ${run.exitCode ?? run.signal}`, tail, durationMs }
        : { ok: true, detail: 'gates passed', tail, durationMs };
  deps.onGateRun?.(tasks, result);
  return result;
}
