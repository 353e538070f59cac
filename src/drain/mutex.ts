// A promise-chain mutex: one holder at a time, in arrival order. The
// integrator and short ref-changing git operations use it.
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  /** Runs ended so far, failed ones included: a reader can tell that something ran since it last looked. */
  ended = 0;

  run<T>(work: () => Promise<T>): Promise<T> {
    const counted = async () => {
      try {
        return await work();
      } finally {
        this.ended++;
      }
    };
    const result = this.tail.then(counted, counted);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
