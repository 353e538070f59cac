// The contract between bench/run.ts and each benchmark module: a module in
// bench/ exports `main(): Promise<BenchResult>`. Benchmarks print figures and
// ratios against a baseline measured in the same run; they never assert
// timings (a busy machine makes any absolute threshold flaky).

/** One measured quantity: the median of `runs`, in `unit`. */
export interface BenchFigure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** Every individual measurement the median was taken from. */
  readonly runs?: readonly number[];
}

/** A goal the figures are compared with; reported, never enforced. */
export interface BenchGoal {
  readonly what: string;
  /** e.g. "<= 1.5" or ">= 0.85" */
  readonly target: string;
  readonly measured: number;
  readonly met: boolean;
}

export interface BenchResult {
  readonly benchmark: string;
  readonly figures: readonly BenchFigure[];
  readonly goals: readonly BenchGoal[];
  /** Breakdowns and remarks, one line each, printed as they are. */
  readonly notes: readonly string[];
}

export type BenchMain = () => Promise<BenchResult>;
