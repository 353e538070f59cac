// npm run bench: runs every benchmark compiled into dist/bench. A module that
// exports `main(): Promise<BenchResult>` (bench/lib/types.ts) is imported and
// called; any other file is a self-contained script and runs as a child
// process with its output passed through. Benchmarks print figures and goals;
// a missed goal is reported, never a failure. The exit code is non-zero only
// when a benchmark itself broke.
//
//   node dist/bench/run.js [NAME...] [--json] [--quick]
//   BENCH_RUNS=N   runs per measurement (default 3; medians are reported)
//   --quick        small sizes, one run each, no goals (lib/quick.ts): CI runs
//                  this so that no benchmark can break unseen
//   BENCH_PROFILE=1  always print the drain breakdowns
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchMain, BenchResult } from './lib/types.js';
import { formatResult } from './lib/print.js';
import { describeMachine, machineLine } from './lib/machine.js';
import { isQuick } from './lib/quick.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SELF = path.basename(fileURLToPath(import.meta.url));

/** The module's source declares `export ... main`: the BenchResult shape. */
function exportsMain(file: string): boolean {
  const text = readFileSync(file, 'utf8');
  return /^export\s+(async\s+)?function\s+main\s*\(/m.test(text) || /^export\s*\{[^}]*\bmain\b[^}]*\}/m.test(text);
}

/** Runs a script benchmark; what it prints goes to `log` as it comes and is kept for the --json report. */
function runScript(file: string, log: (text: string) => void): Promise<{ exitCode: number | null; output: string }> {
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    log(chunk.toString('utf8'));
    output += chunk.toString('utf8');
  });
  return new Promise((resolve) => {
    child.on('error', () => resolve({ exitCode: null, output }));
    child.on('close', (code) => resolve({ exitCode: code, output }));
  });
}

interface Outcome {
  readonly name: string;
  readonly seconds: number;
  readonly result?: BenchResult;
  readonly exitCode?: number | null;
  /** What a script benchmark printed. */
  readonly output?: string;
  readonly error?: string;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  if (args.includes('--quick')) {
    // Before any benchmark is imported or started: they read it as they load.
    process.env.BENCH_QUICK = '1';
    process.env.BENCH_RUNS = '1';
  }
  const wanted = args.filter((arg) => !arg.startsWith('--'));
  const all = readdirSync(HERE)
    .filter((name) => name.endsWith('.js') && name !== SELF)
    .map((name) => name.replace(/\.js$/, ''))
    .sort();
  const unknown = wanted.filter((name) => !all.includes(name));
  if (unknown.length) {
    process.stderr.write(
      `no benchmark ${unknown.join(', ')} in ${HERE}; there are: ${all.join(', ') || 'none'} (run "npm run build" after adding one)\n`,
    );
    return 2;
  }
  const files = all.filter((name) => wanted.length === 0 || wanted.includes(name)).map((name) => `${name}.js`);
  const machine = describeMachine();
  const log = (text: string) => (json ? process.stderr : process.stdout).write(text);
  log(`machine: ${machineLine(machine)}\n\n`);
  const outcomes: Outcome[] = [];
  const began = process.hrtime.bigint();
  for (const name of files) {
    const file = path.join(HERE, name);
    const benchmark = name.replace(/\.js$/, '');
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9;
    if (exportsMain(file)) {
      try {
        const module = (await import(pathToFileURL(file).href)) as { main: BenchMain };
        const measured = await module.main();
        // A quick run's sizes say nothing of the goals: none is reported (lib/quick.ts).
        const result = isQuick() ? { ...measured, goals: [] } : measured;
        outcomes.push({ name: benchmark, seconds: elapsed(), result });
        log(`${formatResult(result)}  (${elapsed().toFixed(0)} s)\n\n`);
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        outcomes.push({ name: benchmark, seconds: elapsed(), error: message });
        log(`== ${benchmark}\n  BROKEN: ${message}\n\n`);
      }
    } else {
      log(`== ${benchmark} (script, run as a child process)\n`);
      const { exitCode, output } = await runScript(file, log);
      outcomes.push({ name: benchmark, seconds: elapsed(), exitCode, output });
      log(`  (${benchmark} exited ${exitCode}, ${elapsed().toFixed(0)} s)\n\n`);
    }
  }
  const total = Number(process.hrtime.bigint() - began) / 1e9;
  const goals = outcomes.flatMap((outcome) =>
    (outcome.result?.goals ?? []).map(
      (goal) =>
        `${goal.met ? 'met    ' : 'NOT met'}  ${outcome.name}: ${goal.what} ${goal.target} (measured ${goal.measured})`,
    ),
  );
  const goalText = isQuick()
    ? '  none: a quick run (small sizes, one run each) says nothing of them\n'
    : goals.map((line) => `  ${line}\n`).join('') || '  none\n';
  log(`goals (reported, not enforced):\n${goalText}total ${total.toFixed(0)} s\n`);
  if (json) process.stdout.write(`${JSON.stringify({ machine, totalSeconds: total, benchmarks: outcomes })}\n`);
  const broken = outcomes.filter(
    (outcome) => outcome.error !== undefined || (outcome.exitCode !== undefined && outcome.exitCode !== 0),
  );
  return broken.length ? 1 : 0;
}

process.exitCode = await main();
