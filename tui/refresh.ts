// Reads the fleet again on every tick, never two reads at once: a gather
// over many repos runs git per repo and can outlast the interval, and piling
// up reads would only make every one of them slower. A tick that finds a read
// still going is skipped. A failed read keeps the last fleet on screen and
// says why; the next successful read clears the error.
import type { Fleet } from '../src/control/fleet/fleet.js';

export interface RefreshState {
  readonly fleet: Fleet | null;
  readonly lastReadAt: number | null;
  readonly error: string | null;
  readonly reading: boolean;
}

export type RefreshResult = 'read' | 'failed' | 'skipped';

export class FleetRefresher {
  #state: RefreshState = { fleet: null, lastReadAt: null, error: null, reading: false };

  constructor(
    private readonly load: () => Promise<Fleet>,
    private readonly now: () => number,
    /** Called whenever the state changes (a read starts or ends). */
    private readonly onChange: (state: RefreshState) => void,
  ) {}

  get state(): RefreshState {
    return this.#state;
  }

  async refresh(): Promise<RefreshResult> {
    if (this.#state.reading) return 'skipped';
    this.#update({ reading: true });
    try {
      const fleet = await this.load();
      this.#update({ fleet, lastReadAt: this.now(), error: null, reading: false });
      return 'read';
    } catch (error) {
      this.#update({ error: error instanceof Error ? error.message : String(error), reading: false });
      return 'failed';
    }
  }

  #update(change: Partial<RefreshState>): void {
    this.#state = { ...this.#state, ...change };
    this.onChange(this.#state);
  }
}
