// npm run bench: runs every benchmark compiled into dist/bench. A module that
// exports `main(): Promise<BenchResult>` (bench/lib/types.ts) is imported and
// called; any other file is a self-contained script and runs as a child
// process with its output passed through. Benchmarks print figures and goals;
// a missed goal is reported, never a failure. The exit code is non-zero only
// when a benchmark itself broke.
//
//   node dist/bench/run.js [NAME...] [--json]
//   BENCH_RUNS=N   runs per measurement (default 3; medians are reported)
//   BENCH_PROFILE=1  always print the drain breakdowns
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchMain, BenchResult } from './lib/types.js';
import { formatResult } from './lib/print.js';
import { describeMachine, machineLine } from './lib/machine.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SELF = path.basename(fileURLToPath(import.meta.url));

/** The module's source declares `export ... main`: the BenchResult shape. */
function exportsMain(file: string): boolean {
  const text = readFileSync(file, 'utf8');
  return /^export\s+(async\s+)?function\s+main\s*\(/m.test(text) || /^export\s*\{[^}]*\bmain\b[^}]*\}/m.test(text);
}

function runScript(file: string): Promise<number | null> {
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
}

interface Outcome {
  readonly name: string;
  readonly seconds: number;
  readonly result?: BenchResult;
  readonly exitCode?: number | null;
  readonly error?: string;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
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
        const result = await module.main();
        outcomes.push({ name: benchmark, seconds: elapsed(), result });
        log(`${formatResult(result)}  (${elapsed().toFixed(0)} s)\n\n`);
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        outcomes.push({ name: benchmark, seconds: elapsed(), error: message });
        log(`== ${benchmark}\n  BROKEN: ${message}\n\n`);
      }
    } else {
      log(`== ${benchmark} (script, run as a child process)\n`);
      const exitCode = await runScript(file);
      outcomes.push({ name: benchmark, seconds: elapsed(), exitCode });
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
  log(
    `goals (reported, not enforced):\n${goals.map((line) => `  ${line}\n`).join('') || '  none\n'}total ${total.toFixed(0)} s\n`,
  );
  if (json) process.stdout.write(`${JSON.stringify({ machine, totalSeconds: total, benchmarks: outcomes })}\n`);
  const broken = outcomes.filter(
    (outcome) => outcome.error !== undefined || (outcome.exitCode !== undefined && outcome.exitCode !== 0),
  );
  return broken.length ? 1 : 0;
}

process.exitCode = await main();
