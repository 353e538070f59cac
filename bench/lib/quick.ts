// Quick mode (`node dist/bench/run.js --quick`, or BENCH_QUICK=1): every
// benchmark at small sizes and one run, so CI can prove that each still
// completes and prints its figures. Figures at those sizes say nothing of
// the goals, so a quick run reports none. Read when asked, not at load:
// run.ts sets it before it imports the benchmarks.
export function isQuick(): boolean {
  return process.env.BENCH_QUICK === '1';
}

/** The full size, or the quick one in quick mode. */
export function sized(full: number, quick: number): number {
  return isQuick() ? quick : full;
}
