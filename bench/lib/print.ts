// Plain-text rendering of a benchmark result, for run.ts and for running one
// benchmark file on its own.
import type { BenchResult } from './types.js';
import { isQuick } from './quick.js';

export function formatResult(result: BenchResult): string {
  const lines = [`== ${result.benchmark}`];
  for (const figure of result.figures) {
    const runs = figure.runs && figure.runs.length > 1 ? `   (runs: ${figure.runs.join(', ')})` : '';
    lines.push(`  ${figure.name}: ${figure.value} ${figure.unit}${runs}`);
  }
  // A quick run's sizes say nothing of the goals (quick.ts).
  for (const goal of isQuick() ? [] : result.goals)
    lines.push(`  goal ${goal.what} ${goal.target}: ${goal.measured} -> ${goal.met ? 'met' : 'NOT met'}`);
  for (const note of result.notes) lines.push(`  ${note}`);
  return `${lines.join('\n')}\n`;
}

export function printResult(result: BenchResult): void {
  process.stdout.write(formatResult(result));
}
