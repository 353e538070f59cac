// A promise-chain mutex: one holder at a time, in arrival order. The
// integrator and short ref-changing git operations use it.
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
