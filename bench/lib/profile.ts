// Where a drain spends its time: orchestrate() run in-process, wired like the
// CLI (src/cli/orchestrate.ts), with the process and fs ports wrapped to count
// and time every git invocation the runner itself makes, every process it
// starts (agents, gates) and every fs write. The agent's own git commands are
// not counted (they are the same in the baseline).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Command } from '../../src/types.js';
import type { FsPort, Ports, ProcessPort } from '../../src/ports.js';
import { realPorts } from '../../src/io/real-ports.js';
import { realControl } from '../../src/io/proc.js';
import { realLocks } from '../../src/io/lock.js';
import { Git } from '../../src/git/git.js';
import { orchestrate } from '../../src/drain/orchestrate.js';
import { applyOverrides } from '../../src/repo/config.js';
import { readRepoConfig } from '../../src/repo/read-config.js';
import { adapterFor } from '../../src/agent/adapters/index.js';
import { resolveAgentBinary } from '../../src/agent/binary.js';
import { agentBaseEnv } from '../../src/agent/env.js';
import { readBoard } from '../../src/board/read.js';
import { stagingWorktree, worktreesDir } from '../../src/paths.js';
import type { Copy } from './repo.js';
import { median, round } from './stats.js';

type Place = 'workspace' | 'staging' | 'task worktree' | 'elsewhere';

interface Call {
  readonly what: string;
  readonly place: Place;
  readonly ms: number;
  /** Epoch ms, to line calls up with the drain's events. */
  readonly start: number;
  readonly end: number;
  readonly taskId?: string;
}

interface TimedEvent {
  readonly event: string;
  readonly taskId?: string;
  readonly at: number;
}

export interface DrainProfile {
  readonly seconds: number;
  readonly tasks: number;
  readonly gitCalls: readonly Call[];
  readonly started: readonly Call[];
  readonly fsWrites: number;
  readonly fsWriteMs: number;
  readonly boardReads: number;
  readonly readBoardMs: number;
  readonly events: readonly TimedEvent[];
  /** CPU seconds of the drain's own node process (user + system). */
  readonly nodeCpu: number;
  /** CPU seconds of every process the drain started and waited for (git, agents, gates), user + system. */
  readonly childCpu: number | undefined;
}

/** CPU seconds of this process's reaped children (cutime + cstime in /proc/self/stat), or undefined off Linux. */
function childrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** The git subcommand, without the runner's leading `-c key=value` flags. */
function gitSubcommand(args: readonly string[]): string {
  let index = 0;
  while (args[index] === '-c') index += 2;
  const sub = args[index] ?? '?';
  // worktree and merge variants cost very differently: keep the next word.
  if (sub === 'worktree') return `worktree ${args[index + 1] ?? ''}`;
  if (sub === 'merge' && args.includes('--abort')) return 'merge --abort';
  if (sub === 'merge-base') return 'merge-base --is-ancestor';
  return sub;
}

function placeOf(copy: Copy, cwd: string | undefined): Place {
  if (!cwd) return 'elsewhere';
  const resolved = path.resolve(cwd);
  if (resolved === path.resolve(copy.clone)) return 'workspace';
  if (resolved === stagingWorktree(copy.clone)) return 'staging';
  if (resolved.startsWith(worktreesDir(copy.clone) + path.sep)) return 'task worktree';
  return 'elsewhere';
}

function now(): number {
  return Date.now();
}

function instrumentedPorts(
  copy: Copy,
  calls: Call[],
  started: Call[],
  fsStats: { writes: number; writeMs: number; boardReads: number },
): Ports {
  const real = realPorts();
  const tasksDir = path.join('backlog', 'tasks');
  const processPort: ProcessPort = {
    ...real.process,
    async run(command: Command) {
      const begin = now();
      const result = await real.process.run(command);
      const end = now();
      if (path.basename(command.program) === 'git')
        calls.push({
          what: gitSubcommand(command.args),
          place: placeOf(copy, command.cwd),
          ms: end - begin,
          start: begin,
          end,
        });
      return result;
    },
    start(command, handlers) {
      const begin = now();
      const process = real.process.start(command, handlers);
      const what = command.program.endsWith('gates.sh') ? 'gate' : `agent (${path.basename(command.program)})`;
      const taskId = command.env.AGENT_TASK_ID;
      void process.exited.then(() => {
        const end = now();
        started.push({
          what,
          place: placeOf(copy, command.cwd),
          ms: end - begin,
          start: begin,
          end,
          ...(taskId ? { taskId } : {}),
        });
      });
      return process;
    },
  };
  const timedWrite =
    <A extends unknown[]>(write: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      const begin = now();
      await write(...args);
      fsStats.writes++;
      fsStats.writeMs += now() - begin;
    };
  const fsPort: FsPort = {
    ...real.fs,
    writeAtomic: timedWrite(real.fs.writeAtomic),
    appendLine: timedWrite(real.fs.appendLine),
    async list(dir) {
      if (dir.endsWith(tasksDir)) fsStats.boardReads++;
      return real.fs.list(dir);
    },
  };
  return { ...real, process: processPort, fs: fsPort };
}

/** One drain of `copy`, in-process, with every runner git call and started process recorded. */
export async function profileDrain(
  baseEnv: Readonly<Record<string, string>>,
  copy: Copy,
  expectLanded: number,
): Promise<DrainProfile> {
  const calls: Call[] = [];
  const started: Call[] = [];
  const fsStats = { writes: 0, writeMs: 0, boardReads: 0 };
  const ports = instrumentedPorts(copy, calls, started, fsStats);
  const env = agentBaseEnv(baseEnv);
  const { config: repoConfig } = await readRepoConfig(ports.fs, copy.clone);
  const config = applyOverrides(repoConfig, {});
  const adapter = adapterFor(config.assistant);
  const binary = await resolveAgentBinary(ports.process, adapter, config, copy.clone, env.PATH ?? '');
  const events: TimedEvent[] = [];
  const begin = now();
  const nodeCpuBefore = process.cpuUsage();
  const childCpuBefore = childrenCpuSeconds();
  const summary = await orchestrate(ports, new Git(ports.process, { env, files: ports.fs }), {
    workspace: copy.clone,
    config,
    only: undefined,
    push: true,
    force: false,
    runId: ports.ids.next(),
    env,
    secrets: [],
    stateDir: copy.state,
    adapter,
    binary,
    onEvent: (event) =>
      events.push({
        event: event.event,
        at: Date.parse(event.time),
        ...('taskId' in event && typeof event.taskId === 'string' ? { taskId: event.taskId } : {}),
      }),
    stop: new AbortController().signal,
    graceMs: 5000,
    control: realControl,
    locks: realLocks,
  });
  const seconds = (now() - begin) / 1000;
  const nodeCpuUsed = process.cpuUsage(nodeCpuBefore);
  const childCpuAfter = childrenCpuSeconds();
  const landed = summary.tasks.filter((task) => task.outcome === 'landed').length;
  if (landed !== expectLanded)
    throw new Error(
      `profiled drain landed ${landed} of ${expectLanded} tasks (${summary.outcome}: ${summary.failure ?? ''})`,
    );
  // readBoard alone, on the staging worktree as the drain loop reads it.
  const boardTimes: number[] = [];
  const stagingDir = stagingWorktree(copy.clone);
  for (let index = 0; index < 15; index++) {
    const t0 = process.hrtime.bigint();
    await readBoard(realPorts().fs, stagingDir);
    boardTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return {
    seconds,
    tasks: landed,
    gitCalls: calls,
    started,
    fsWrites: fsStats.writes,
    fsWriteMs: fsStats.writeMs,
    boardReads: fsStats.boardReads,
    readBoardMs: median(boardTimes),
    events,
    nodeCpu: (nodeCpuUsed.user + nodeCpuUsed.system) / 1e6,
    childCpu: childCpuBefore === undefined || childCpuAfter === undefined ? undefined : childCpuAfter - childCpuBefore,
  };
}

/** Human lines: git calls per task by subcommand and place, processes, fs, board reads. */
export function describeProfile(profile: DrainProfile): string[] {
  const perTask = (count: number) => round(count / profile.tasks, 2);
  const groups = new Map<string, { count: number; ms: number }>();
  for (const call of profile.gitCalls) {
    const key = `${call.place}: git ${call.what}`;
    const group = groups.get(key) ?? { count: 0, ms: 0 };
    group.count++;
    group.ms += call.ms;
    groups.set(key, group);
  }
  const totalMs = profile.gitCalls.reduce((sum, call) => sum + call.ms, 0);
  const serialMs = profile.gitCalls
    .filter((call) => call.place !== 'task worktree')
    .reduce((sum, call) => sum + call.ms, 0);
  const gates = profile.started.filter((call) => call.what === 'gate');
  const agents = profile.started.filter((call) => call.what !== 'gate');
  const lines = [
    `in-process drain: ${round(profile.seconds, 2)} s for ${profile.tasks} tasks; CPU: ${round(profile.nodeCpu, 2)} s in the runner's node process, ${profile.childCpu === undefined ? 'unknown' : `${round(profile.childCpu, 2)} s`} in the processes it started (git, agents, gates)`,
    `runner git invocations: ${profile.gitCalls.length} (${perTask(profile.gitCalls.length)} per task), ${Math.round(totalMs)} ms summed wall time, ${Math.round(serialMs)} ms of it in the workspace and staging worktree (serialized by the refs and integrator locks)`,
    ...[...groups.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(
        ([key, group]) =>
          `  ${key}: ${group.count} calls (${perTask(group.count)}/task), ${Math.round(group.ms)} ms, ${round(group.ms / group.count, 1)} ms each`,
      ),
    `gates: ${gates.length} runs, ${Math.round(gates.reduce((sum, call) => sum + call.ms, 0))} ms in all; agents: ${agents.length} runs, ${Math.round(agents.reduce((sum, call) => sum + call.ms, 0))} ms in all`,
    `fs writes (atomic writes with fsync, transcript appends): ${profile.fsWrites} (${perTask(profile.fsWrites)}/task), ${Math.round(profile.fsWriteMs)} ms summed`,
    `board reads: ${profile.boardReads} (${perTask(profile.boardReads)}/task); readBoard of the ${profile.tasks}-task board: ${round(profile.readBoardMs, 2)} ms median`,
    ...describeTimeline(profile),
  ];
  return lines;
}

function mean(values: readonly number[]): number {
  return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0;
}

/**
 * A task's life in phases, from the drain's events and the agent's process:
 * task-started -> agent starts (worktree add, board read), agent runs,
 * agent exits -> task-landed (integrator queue, merge, gate, commit, worktree
 * removal), task-landed -> the next task starts in the freed slot.
 */
export function describeTimeline(profile: Pick<DrainProfile, 'events' | 'started'>): string[] {
  const startedAt = new Map<string, number>();
  const landedAt = new Map<string, number>();
  for (const event of profile.events) {
    if (!event.taskId) continue;
    if (event.event === 'task-started') startedAt.set(event.taskId, event.at);
    if (event.event === 'task-landed') landedAt.set(event.taskId, event.at);
  }
  const before: number[] = [];
  const agent: number[] = [];
  const after: number[] = [];
  for (const run of profile.started) {
    if (!run.taskId) continue;
    const start = startedAt.get(run.taskId);
    const landed = landedAt.get(run.taskId);
    if (start === undefined || landed === undefined) continue;
    before.push(run.start - start);
    agent.push(run.end - run.start);
    after.push(landed - run.end);
  }
  // A freed slot is refilled by the next task-started after a landing.
  const starts = [...startedAt.values()].sort((a, b) => a - b);
  const refill: number[] = [];
  for (const landed of [...landedAt.values()].sort((a, b) => a - b)) {
    const next = starts.find((start) => start >= landed);
    if (next !== undefined && next - landed < 10_000) refill.push(next - landed);
  }
  const integrator = profile.started.filter((run) => run.what === 'gate');
  return [
    `per task, mean: ${Math.round(mean(before))} ms from task start to agent start, ${Math.round(mean(agent))} ms agent, ${Math.round(mean(after))} ms from agent exit to landed (integrator queue + merge + gate + commit + worktree removal), ${Math.round(mean(refill))} ms from a landing to the next task start`,
    `gate runs: ${integrator.length}, mean ${Math.round(mean(integrator.map((run) => run.ms)))} ms`,
  ];
}
