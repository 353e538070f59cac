// The drain loop asks for the board on auto/work every time a slot frees or
// a task ends, but only the integrator changes the staging worktree (merges,
// landings, park and block commits, all under its mutex). So the board is
// read again only when an integrator run has ended since the last read; a
// slot freed by an agent that just finished reuses the board as it was.
import type { Board } from '../../types.js';

/**
 * A board reader that reads again only when `version` (the integrator's
 * ended runs) moved. The version is taken before the read, so a run that
 * ends while the board is being read makes the next call read again.
 */
export function boardReader(read: () => Promise<Board>, version: () => number): () => Promise<Board> {
  let last: { readonly version: number; readonly board: Board } | undefined;
  return async () => {
    const current = version();
    if (last?.version === current) return last.board;
    const board = await read();
    last = { version: current, board };
    return board;
  };
}
