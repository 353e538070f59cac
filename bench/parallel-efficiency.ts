// Parallel efficiency: 12 tasks whose agent sleeps 2 s, 4 at a time. The ideal
// makespan is 12 * 2 / 4 = 6 s; efficiency = ideal / measured. Measured as the
// CLI's wall time from spawn to exit (start-up, fetch, staging, publish
// included), and as the drain's own span from the first task start to the
// last landing (from its progress events). The repo is small on purpose:
// this measures whether slots stay busy, not checkout cost (drain-overhead
// covers that).
import { pathToFileURL } from 'node:url';
import type { BenchResult } from './lib/types.js';
import { Sandbox, benchTasks, tinyAgentScript } from './lib/repo.js';
import { runDrainCli, SCRIPTED_AGENT, taskSpan } from './lib/drain.js';
import { median, round, runsWanted } from './lib/stats.js';
import { describeProfile, profileDrain } from './lib/profile.js';
import { sized } from './lib/quick.js';

const TASKS = sized(12, 4);
const PARALLEL = 4;
const SLEEP_SECONDS = sized(2, 1);
const REPO_FILES = 50;
const GOAL = 0.85;
const IDEAL = (TASKS * SLEEP_SECONDS) / PARALLEL;

export async function main(): Promise<BenchResult> {
  const runs = runsWanted();
  const sandbox = new Sandbox('agent-runner-bench-parallel-');
  try {
    const tinyAgent = sandbox.script('sleepy-agent', tinyAgentScript(SLEEP_SECONDS));
    const tasks = benchTasks(
      TASKS,
      (id, index) =>
        `Sleep, then write one file.\nagent: sleep ${SLEEP_SECONDS}\nagent: write out/task-${index}.txt "${id}"`,
    );
    const variants = [
      {
        name: 'tiny shell agent (sleep 2; set Done; commit)',
        template: sandbox.template(
          { totalFiles: REPO_FILES, tasks, agent: [tinyAgent], maxParallel: PARALLEL },
          'tiny',
        ),
        wall: [] as number[],
        span: [] as number[],
      },
      {
        name: 'bundled scripted agent (agent: sleep 2)',
        template: sandbox.template(
          { totalFiles: REPO_FILES, tasks, agent: [SCRIPTED_AGENT], maxParallel: PARALLEL },
          'scripted',
        ),
        wall: [] as number[],
        span: [] as number[],
      },
    ];
    for (let run = 0; run < runs; run++) {
      for (const variant of variants) {
        const copy = sandbox.copy(variant.template);
        try {
          const drain = await runDrainCli(sandbox.env, copy, TASKS);
          variant.wall.push(drain.seconds);
          variant.span.push(taskSpan(drain.events));
        } finally {
          sandbox.discard(copy);
        }
      }
    }
    const [tiny] = variants;
    const efficiency = IDEAL / median(tiny!.wall);
    let breakdown: string[] = ['within goal: no breakdown (BENCH_PROFILE=1 forces one)'];
    if (efficiency < GOAL || process.env.BENCH_PROFILE === '1') {
      const copy = sandbox.copy(tiny!.template);
      try {
        breakdown = [
          'breakdown, from one more drain (tiny agent) run in-process with instrumented ports:',
          ...describeProfile(await profileDrain(sandbox.env, copy, TASKS)),
        ];
      } finally {
        sandbox.discard(copy);
      }
    }
    return {
      benchmark: 'parallel-efficiency',
      figures: variants.flatMap((variant) => [
        {
          name: `${variant.name}: makespan, CLI wall`,
          value: round(median(variant.wall)),
          unit: 's',
          runs: variant.wall.map((value) => round(value)),
        },
        {
          name: `${variant.name}: efficiency ${IDEAL} s / CLI wall`,
          value: round(IDEAL / median(variant.wall)),
          unit: '',
        },
        {
          name: `${variant.name}: first task start to last landing`,
          value: round(median(variant.span)),
          unit: 's',
          runs: variant.span.map((value) => round(value)),
        },
        {
          name: `${variant.name}: efficiency ${IDEAL} s / task span`,
          value: round(IDEAL / median(variant.span)),
          unit: '',
        },
      ]),
      goals: [
        {
          what: 'ideal / measured makespan (CLI wall, tiny agent)',
          target: `>= ${GOAL}`,
          measured: round(efficiency),
          met: efficiency >= GOAL,
        },
      ],
      notes: [
        `${TASKS} tasks, ${PARALLEL} at a time, agent sleeps ${SLEEP_SECONDS} s, repo of ${REPO_FILES} files; median of ${runs} runs each, interleaved; ${sandbox.where()}`,
        ...breakdown,
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
