// Batched gates: 20 finished green tasks and a gate that sleeps 1 s,
// integrated with the default maxBatch against maxBatch 1 (one gate run per
// task, the integrator as it was). "Finished": each task's branch holds its
// Done work before the drain starts, as an interrupted drain leaves them, so
// all 20 wait for the integrator at once. The integration span runs from the
// first gate's start to the last landing (from the drain's progress events).
// Also the same 20 tasks drained live (16 tiny agents at a time, so the first
// to finish is gated alone while the others queue). Then 20 live tasks with
// one red among them (it writes a marker file the gate rejects): how many
// gate runs bisection used against 2*ceil(log2(20))+1, and that only the red
// task parked.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchResult } from './lib/types.js';
import { Sandbox, benchTasks, tinyAgentScript, type BenchTask, type Copy } from './lib/repo.js';
import { taskFileName } from '../src/board/render.js';
import { runDrainCli, type CliDrain } from './lib/drain.js';
import { median, round, runsWanted } from './lib/stats.js';
import { sized } from './lib/quick.js';

const TASKS = sized(20, 6);
const PARALLEL = sized(16, 3);
const REPO_FILES = 50;
const RED_TASK = `TASK-${sized(13, 4)}`;
const GOAL_SPEEDUP = 5;
const GATE_RUN_BOUND = 2 * Math.ceil(Math.log2(TASKS)) + 1;
/** Red when a marker file is in the tree; 1 s either way. */
const SLEEPY_MARKER_GATE =
  '#!/bin/sh\nsleep 1\nfor f in out/marker-*; do if [ -e "$f" ]; then echo "gate: found $f"; exit 1; fi; done\n';

interface Event {
  readonly event: string;
  readonly time: string;
  readonly taskId?: string;
  readonly durationMs?: number;
  readonly tasks?: readonly string[];
  readonly ok?: boolean;
}

/** The tiny agent, plus a marker file for a task whose description asks for one. */
function markerAgentScript(): string {
  return tinyAgentScript().replace(
    'git add -A',
    'if grep -q "write a marker" "$task"; then printf x > "out/marker-$id"; fi\ngit add -A',
  );
}

function eventsOf(drain: CliDrain): Event[] {
  return drain.events as unknown as Event[];
}

/** First gate start to the last task's end, in seconds. */
function integrationSpan(events: readonly Event[]): number {
  const gates = events.filter((event) => event.event === 'gate-run');
  const start = Math.min(...gates.map((event) => Date.parse(event.time) - (event.durationMs ?? 0)));
  const ends = events
    .filter((event) => event.event === 'task-landed' || event.event === 'task-parked')
    .map((event) => Date.parse(event.time));
  return (Math.max(...ends) - start) / 1000;
}

/** Each task's Done work committed on its branch auto/<id>, as an interrupted drain leaves finished tasks. */
function finishBranches(sandbox: Sandbox, copy: Copy, tasks: readonly BenchTask[]): void {
  tasks.forEach((task, index) => {
    const file = `backlog/tasks/${taskFileName(task.id, task.title)}`;
    sandbox.git(copy.clone, 'checkout', '-q', '-b', `auto/${task.id}`, 'main');
    writeFileSync(
      path.join(copy.clone, file),
      readFileSync(path.join(copy.clone, file), 'utf8').replace(/^status: To Do$/m, 'status: Done'),
    );
    mkdirSync(path.join(copy.clone, 'out'), { recursive: true });
    writeFileSync(path.join(copy.clone, `out/task-${index + 1}.txt`), `${task.id}\n`);
    sandbox.git(copy.clone, 'add', '-A');
    sandbox.git(copy.clone, 'commit', '-q', '-m', `${task.id}: done`);
    sandbox.git(copy.clone, 'checkout', '-q', 'main');
  });
}

export async function main(): Promise<BenchResult> {
  const runs = runsWanted();
  const sandbox = new Sandbox('agent-runner-bench-batch-');
  try {
    const agent = sandbox.script('marker-agent', markerAgentScript());
    const green = benchTasks(TASKS, (id, index) => `Write one file.\nagent: write out/task-${index}.txt "${id}"`);
    const oneRed = green.map((task) =>
      task.id === RED_TASK ? { ...task, description: `${task.description}\nThen write a marker.` } : task,
    );
    const spec = { totalFiles: REPO_FILES, agent: [agent], maxParallel: PARALLEL, gates: SLEEPY_MARKER_GATE };
    const batched = sandbox.template({ ...spec, tasks: green }, 'batched');
    const single = sandbox.template({ ...spec, tasks: green, config: { maxBatch: 1 } }, 'single');
    const red = sandbox.template({ ...spec, tasks: oneRed }, 'red');
    const spans = { batched: [] as number[], single: [] as number[], live: [] as number[], liveSingle: [] as number[] };
    const gateRuns = { batched: [] as number[], single: [] as number[], live: [] as number[], red: [] as number[] };
    const redOutcomes: string[] = [];
    const drain = async (template: string, landed: number, finished = false): Promise<Event[]> => {
      const copy = sandbox.copy(template);
      try {
        if (finished) finishBranches(sandbox, copy, green);
        return eventsOf(await runDrainCli(sandbox.env, copy, landed));
      } finally {
        sandbox.discard(copy);
      }
    };
    for (let run = 0; run < runs; run++) {
      for (const name of ['batched', 'single'] as const) {
        const events = await drain(name === 'batched' ? batched : single, TASKS, true);
        spans[name].push(integrationSpan(events));
        gateRuns[name].push(events.filter((event) => event.event === 'gate-run').length);
      }
      const live = await drain(batched, TASKS);
      spans.live.push(integrationSpan(live));
      gateRuns.live.push(live.filter((event) => event.event === 'gate-run').length);
      spans.liveSingle.push(integrationSpan(await drain(single, TASKS)));
      const events = await drain(red, TASKS - 1);
      gateRuns.red.push(events.filter((event) => event.event === 'gate-run').length);
      redOutcomes.push(
        events
          .filter((event) => event.event === 'task-parked')
          .map((event) => event.taskId)
          .join(',') || 'none',
      );
    }
    const speedup = median(spans.single) / median(spans.batched);
    const worstRed = Math.max(...gateRuns.red);
    const onlyRedParked = redOutcomes.every((parked) => parked === RED_TASK);
    return {
      benchmark: 'batched-gates',
      figures: [
        {
          name: `integration span, maxBatch 8 (default), ${TASKS} finished green tasks, gate sleeps 1 s`,
          value: round(median(spans.batched)),
          unit: 's',
          runs: spans.batched.map((value) => round(value)),
        },
        {
          name: `integration span, maxBatch 1 (one gate per task)`,
          value: round(median(spans.single)),
          unit: 's',
          runs: spans.single.map((value) => round(value)),
        },
        { name: 'speed-up, maxBatch 1 span / batched span', value: round(speedup), unit: 'x' },
        { name: 'gate runs, batched, all green', value: median(gateRuns.batched), unit: '', runs: gateRuns.batched },
        { name: 'gate runs, maxBatch 1, all green', value: median(gateRuns.single), unit: '', runs: gateRuns.single },
        {
          name: `live drain (${PARALLEL} tiny agents at a time): integration span, maxBatch 8`,
          value: round(median(spans.live)),
          unit: 's',
          runs: spans.live.map((value) => round(value)),
        },
        {
          name: 'live drain: integration span, maxBatch 1',
          value: round(median(spans.liveSingle)),
          unit: 's',
          runs: spans.liveSingle.map((value) => round(value)),
        },
        { name: 'live drain: speed-up', value: round(median(spans.liveSingle) / median(spans.live)), unit: 'x' },
        {
          name: 'live drain: gate runs, batched, all green',
          value: median(gateRuns.live),
          unit: '',
          runs: gateRuns.live,
        },
        {
          name: `gate runs, batched, one red (${RED_TASK})`,
          value: median(gateRuns.red),
          unit: '',
          runs: gateRuns.red,
        },
      ],
      goals: [
        {
          what: `integration span speed-up, ${TASKS} finished tasks, batched against maxBatch 1`,
          target: `>= ${GOAL_SPEEDUP}`,
          measured: round(speedup),
          met: speedup >= GOAL_SPEEDUP,
        },
        {
          what: `gate runs with one red of ${TASKS} (worst run)`,
          target: `<= ${GATE_RUN_BOUND}`,
          measured: worstRed,
          met: worstRed <= GATE_RUN_BOUND && onlyRedParked,
        },
      ],
      notes: [
        `${TASKS} tasks, ${PARALLEL} agents at a time (tiny shell agent), repo of ${REPO_FILES} files; median of ${runs} runs each, interleaved; ${sandbox.where()}`,
        `parked in the one-red drains: ${redOutcomes.join('; ')} (expected ${RED_TASK} alone each time)`,
      ],
    };
  } finally {
    sandbox.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { printResult } = await import('./lib/print.js');
  printResult(await main());
}
