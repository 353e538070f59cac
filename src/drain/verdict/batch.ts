// Batched integration as a table of decisions. Finished tasks that wait for
// the integrator are merged one after another onto auto/work's tip (a chain
// of merge commits, each task its own), the gate runs once on the chain's
// tip, and green lands the lot. Red bisects over the chain's prefixes: the
// shortest red prefix names the culprit (the prefix one shorter is green),
// the green prefix before it lands, the culprit is parked, and the tasks
// after it are merged again without it and gated again. Reusing the chain's
// commits means a prefix is gated without merging anything twice. Gating
// prefixes in the chain's order gives exactly the outcome the one-at-a-time
// integrator gave in that order, with fewer gate runs. Pure: the integrator
// (integrate/batch.ts) asks nextStep what to do and reports what happened.
import type { TaskId } from '../../types.js';
import { compareIds } from '../../board/readiness.js';

export { DEFAULT_MAX_BATCH } from '../../repo/config.js';

/**
 * Pure: which waiting tasks form the next batch and their merge order. The
 * longest-waiting maxBatch tasks (so none waits behind newcomers forever),
 * merged in board id order, so the same waiting set always gives the same chain.
 */
export function formBatch(waiting: readonly TaskId[], maxBatch: number): TaskId[] {
  return waiting.slice(0, Math.max(1, maxBatch)).sort(compareIds);
}

export interface Bisection<G extends { readonly ok: boolean }> {
  /** Tasks still to merge onto the chain, in order. */
  readonly toMerge: readonly TaskId[];
  /** Tasks merged on top of auto/work's tip, in order; chain[i]'s commit holds chain[0..i]. */
  readonly chain: readonly TaskId[];
  /** The longest chain prefix known green (0: auto/work's tip itself, gated when it landed). */
  readonly green: number;
  /** The shortest chain prefix known red, and that gate's result. */
  readonly red: { readonly prefix: number; readonly gate: G } | undefined;
  readonly gateRuns: number;
}

export type BisectStep<G> =
  /** Merge the task onto the chain's tip (its own merge commit). */
  | { readonly kind: 'merge'; readonly task: TaskId }
  /** Gate the chain's commit after its first `prefix` tasks. */
  | { readonly kind: 'gate'; readonly prefix: number; readonly tasks: readonly TaskId[] }
  /** Move auto/work to the chain's commit after its first `count` tasks (a gated green state). */
  | { readonly kind: 'land'; readonly tasks: readonly TaskId[] }
  /**
   * The chain's first task is red on its own on auto/work's tip: park it with this gate's output; the rest merge again.
   */
  | { readonly kind: 'culprit'; readonly task: TaskId; readonly gate: G }
  | { readonly kind: 'done' };

export function startBisection<G extends { readonly ok: boolean }>(batch: readonly TaskId[]): Bisection<G> {
  return { toMerge: [...batch], chain: [], green: 0, red: undefined, gateRuns: 0 };
}

/** Pure: what the integrator does next. */
export function nextStep<G extends { readonly ok: boolean }>(state: Bisection<G>): BisectStep<G> {
  const { chain, green, red } = state;
  if (state.toMerge.length) return { kind: 'merge', task: state.toMerge[0]! };
  if (!chain.length) return { kind: 'done' };
  if (green === chain.length) return { kind: 'land', tasks: chain };
  if (!red) return { kind: 'gate', prefix: chain.length, tasks: chain };
  if (red.prefix === green + 1) {
    // The green prefix lands first, so the culprit is judged on auto/work's own tip.
    if (green > 0) return { kind: 'land', tasks: chain.slice(0, green) };
    return { kind: 'culprit', task: chain[0]!, gate: red.gate };
  }
  const prefix = Math.floor((green + red.prefix) / 2);
  return { kind: 'gate', prefix, tasks: chain.slice(0, prefix) };
}

/**
 * The task was merged onto the chain, or it conflicted (then it leaves the batch: the conflict rule applies to it
 * alone).
 */
export function afterMerge<G extends { readonly ok: boolean }>(state: Bisection<G>, merged: boolean): Bisection<G> {
  const [task, ...rest] = state.toMerge;
  if (task === undefined) throw new Error('afterMerge: nothing was to merge');
  return { ...state, toMerge: rest, chain: merged ? [...state.chain, task] : state.chain };
}

export function afterGate<G extends { readonly ok: boolean }>(
  state: Bisection<G>,
  prefix: number,
  gate: G,
): Bisection<G> {
  const gateRuns = state.gateRuns + 1;
  if (gate.ok) return { ...state, gateRuns, green: Math.max(state.green, prefix) };
  return { ...state, gateRuns, red: state.red && state.red.prefix <= prefix ? state.red : { prefix, gate } };
}

/** auto/work moved to the chain's commit after `count` tasks: the chain now starts there. */
export function afterLand<G extends { readonly ok: boolean }>(state: Bisection<G>, count: number): Bisection<G> {
  return {
    ...state,
    chain: state.chain.slice(count),
    green: state.green - count,
    red: state.red && { ...state.red, prefix: state.red.prefix - count },
  };
}

/** The culprit is out; the tasks after it were merged on top of it, so they merge again onto auto/work's tip. */
export function afterCulprit<G extends { readonly ok: boolean }>(state: Bisection<G>): Bisection<G> {
  return { ...state, toMerge: [...state.chain.slice(1), ...state.toMerge], chain: [], green: 0, red: undefined };
}
