// What one watch tick does for one repo. Pure: everything it looks at is a
// parameter, so every case is a table row in a unit test.
export interface TickInput {
  readonly enabled: boolean;
  /** The operator paused the watcher (control/watch/pause.ts): start nothing, not even a queued job. */
  readonly paused?: boolean;
  /** This watcher is already running something for the repo. */
  readonly running: boolean;
  /** SIGTERM arrived: start nothing new. */
  readonly stopping: boolean;
  readonly queued: number;
  /** undefined when the board was not read (a queued job comes first) or could not be read. */
  readonly ready: readonly string[] | undefined;
  /** Why the board could not be read, if it could not. */
  readonly boardError?: string;
}

export type TickAction =
  | { readonly kind: 'skip'; readonly reason: 'stopping' | 'running' | 'disabled' | 'paused' }
  | { readonly kind: 'run-job' }
  | { readonly kind: 'drain'; readonly ready: readonly string[] }
  | { readonly kind: 'idle' }
  | { readonly kind: 'broken'; readonly reason: string };

/** Whether the tick needs the board at all (it does not when a job is queued or nothing may start). */
export function needsBoard(input: Pick<TickInput, 'enabled' | 'paused' | 'running' | 'stopping' | 'queued'>): boolean {
  return input.enabled && !input.paused && !input.running && !input.stopping && input.queued === 0;
}

export function decideTick(input: TickInput): TickAction {
  if (input.stopping) return { kind: 'skip', reason: 'stopping' };
  if (input.running) return { kind: 'skip', reason: 'running' };
  if (!input.enabled) return { kind: 'skip', reason: 'disabled' };
  if (input.paused) return { kind: 'skip', reason: 'paused' };
  // Queued jobs first: the operator asked for them explicitly.
  if (input.queued > 0) return { kind: 'run-job' };
  if (input.boardError !== undefined) return { kind: 'broken', reason: input.boardError };
  if (input.ready && input.ready.length > 0) return { kind: 'drain', ready: input.ready };
  return { kind: 'idle' };
}
