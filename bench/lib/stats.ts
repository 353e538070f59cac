// Small numeric helpers for benchmark figures.

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Wall-clock seconds an async function takes. */
export async function timed<T>(work: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const started = process.hrtime.bigint();
  const value = await work();
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, value };
}

/** How many runs each measurement takes; BENCH_RUNS overrides (at least 1). */
export function runsWanted(fallback = 3): number {
  const wanted = Number.parseInt(process.env.BENCH_RUNS ?? '', 10);
  return Number.isInteger(wanted) && wanted >= 1 ? wanted : fallback;
}
