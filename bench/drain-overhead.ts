// Control-plane overhead: drain 40 one-file tasks, 4 at a time, in a repo of
// ~2,000 files, with the real `agent-runner orchestrate --drain` CLI, against
// a bash script doing the same git work with no control plane (see
// lib/shell-baseline.ts). Both use the same tiny shell agent, so the ratio
// measures the runner, not the agent. Also: the same drain with the bundled
// scripted agent (a node process per task), and, when the goal is missed, an
// in-process profile of where the drain's own time goes.
import { pathToFileURL } from 'node:url';
import type { BenchFigure, BenchResult } from './lib/types.js';
import { Sandbox, benchTasks, tinyAgentScript, type Copy } from './lib/repo.js';
import { runDrainCli, SCRIPTED_AGENT } from './lib/drain.js';
import { baselineLandings, runShellBaseline, writeShellBaseline } from './lib/shell-baseline.js';
import { describeProfile, profileDrain } from './lib/profile.js';
import { cpuSeconds, type CpuTime } from './lib/cpu.js';
import { median, round, runsWanted } from './lib/stats.js';
import { sized } from './lib/quick.js';

const TASKS = sized(40, 4);
const PARALLEL = 4;
const REPO_FILES = sized(2000, 50);
/** Issue 15: the runner within 1.2x of the shell, in wall time and in CPU time. */
const GOAL_RATIO = 1.2;

interface Sample {
  readonly seconds: number;
  readonly cpu: CpuTime | undefined;
}

class Series {
  readonly samples: Sample[] = [];
  constructor(readonly name: string) {}
  wall(): number {
    return median(this.samples.map((sample) => sample.seconds));
  }
  /** Median CPU seconds, or undefined when any run could not be measured. */
  cpu(): number | undefined {
    const cpu = this.samples.map((sample) => sample.cpu);
    return cpu.every((value) => value !== undefined) ? median(cpu.map((value) => cpuSeconds(value!))) : undefined;
  }
  figures(): BenchFigure[] {
    const figures: BenchFigure[] = [
      {
        name: `${this.name}, wall`,
        value: round(this.wall()),
        unit: 's',
        runs: this.samples.map((sample) => round(sample.seconds)),
      },
    ];
    const cpu = this.cpu();
    if (cpu !== undefined)
      figures.push({
        name: `${this.name}, CPU (user+sys)`,
        value: round(cpu),
        unit: 's',
        runs: this.samples.map((sample) => round(cpuSeconds(sample.cpu!))),
      });
    return figures;
  }
}

export async function main(): Promise<BenchResult> {
  const runs = runsWanted();
  const sandbox = new Sandbox('agent-runner-bench-overhead-');
  try {
    const tinyAgent = sandbox.script('tiny-agent', tinyAgentScript());
    const baseline = writeShellBaseline(sandbox);
    const tasks = benchTasks(TASKS, (id, index) => `Write one file.\nagent: write out/task-${index}.txt "${id}"`);
    const ids = tasks.map((task) => task.id);
    const tinyTemplate = sandbox.template(
      { totalFiles: REPO_FILES, tasks, agent: [tinyAgent], maxParallel: PARALLEL },
      'tiny',
    );
    const scriptedTemplate = sandbox.template(
      { totalFiles: REPO_FILES, tasks, agent: [SCRIPTED_AGENT], maxParallel: PARALLEL },
      'scripted',
    );

    const shell = new Series(`shell baseline (${TASKS} tasks, ${PARALLEL} at a time, ${REPO_FILES} files)`);
    const product = new Series('orchestrate --drain CLI, tiny shell agent');
    const scripted = new Series('orchestrate --drain CLI, bundled scripted agent');
    const measure = async <T>(template: string, work: (copy: Copy) => Promise<T>): Promise<T> => {
      const copy = sandbox.copy(template);
      try {
        return await work(copy);
      } finally {
        sandbox.discard(copy);
      }
    };
    // Interleaved, so a burst of load from elsewhere hits every variant alike.
    for (let run = 0; run < runs; run++) {
      shell.samples.push(
        await measure(tinyTemplate, async (copy) => {
          const result = await runShellBaseline(sandbox, baseline, copy, tinyAgent, PARALLEL, ids);
          const landed = baselineLandings(sandbox, copy);
          if (landed !== TASKS) throw new Error(`shell baseline landed ${landed} of ${TASKS} tasks`);
          return result;
        }),
      );
      product.samples.push(await measure(tinyTemplate, (copy) => runDrainCli(sandbox.env, copy, TASKS)));
      scripted.samples.push(await measure(scriptedTemplate, (copy) => runDrainCli(sandbox.env, copy, TASKS)));
    }

    const ratio = product.wall() / shell.wall();
    const scriptedRatio = scripted.wall() / shell.wall();
    const shellCpu = shell.cpu();
    const productCpu = product.cpu();
    const cpuRatio = shellCpu !== undefined && productCpu !== undefined ? productCpu / shellCpu : undefined;
    const missed = ratio > GOAL_RATIO || (cpuRatio !== undefined && cpuRatio > GOAL_RATIO);
    // The breakdown costs one more drain: only when a goal is missed, or asked for.
    const profile =
      missed || process.env.BENCH_PROFILE === '1'
        ? await measure(tinyTemplate, (copy) => profileDrain(sandbox.env, copy, TASKS))
        : undefined;
    return {
      benchmark: 'drain-overhead',
      figures: [
        ...shell.figures(),
        ...product.figures(),
        ...scripted.figures(),
        { name: 'ratio orchestrate / shell, wall (tiny agent)', value: round(ratio), unit: 'x' },
        ...(cpuRatio !== undefined
          ? [{ name: 'ratio orchestrate / shell, CPU (tiny agent)', value: round(cpuRatio), unit: 'x' }]
          : []),
        { name: 'ratio orchestrate with scripted agent / shell, wall', value: round(scriptedRatio), unit: 'x' },
        ...(profile
          ? [
              {
                name: 'runner git invocations per task',
                value: round(profile.gitCalls.length / profile.tasks, 1),
                unit: 'calls',
              },
            ]
          : []),
      ],
      goals: [
        {
          what: 'orchestrate / shell baseline, wall (tiny agent)',
          target: `<= ${GOAL_RATIO}`,
          measured: round(ratio),
          met: ratio <= GOAL_RATIO,
        },
        ...(cpuRatio !== undefined
          ? [
              {
                what: 'orchestrate / shell baseline, CPU (tiny agent)',
                target: `<= ${GOAL_RATIO}`,
                measured: round(cpuRatio),
                met: cpuRatio <= GOAL_RATIO,
              },
            ]
          : []),
      ],
      notes: [
        `median of ${runs} runs each, interleaved; ${sandbox.where()}`,
        ...(cpuRatio === undefined
          ? ['CPU not measured (no GNU time at /usr/bin/time): the CPU goal is not judged']
          : []),
        ...(profile
          ? ['breakdown, from one more drain run in-process with instrumented ports:', ...describeProfile(profile)]
          : ['within goal: no breakdown (BENCH_PROFILE=1 forces one)']),
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
