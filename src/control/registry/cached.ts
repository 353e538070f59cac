// The registry as a long-running reader (the watcher) sees it: parsed again
// only when its text changed. A broken registry is remembered as broken too,
// so an idle tick over a registry with thousands of problems costs one read
// and a string comparison, not a parse.
import type { FsPort, ScheduleCheck } from '../../ports.js';
import type { Registry } from '../../types.js';
import { registryFromText } from './parse.js';

export class CachedRegistry {
  private last: { readonly text: string; readonly outcome: { registry: Registry } | { error: Error } } | undefined;
  /** How many times the text was parsed (what the cache saves). */
  parses = 0;

  constructor(
    private readonly deps: { readonly fs: Pick<FsPort, 'readTextIfExists'>; readonly scheduler: ScheduleCheck },
    private readonly file: string,
  ) {}

  /** The registry, or the same UsageError as readRegistry, re-thrown from the cache while the text is unchanged. */
  async read(): Promise<Registry> {
    const text = await this.deps.fs.readTextIfExists(this.file);
    if (text === undefined || this.last?.text !== text) {
      this.parses++;
      let outcome: { registry: Registry } | { error: Error };
      try {
        outcome = { registry: registryFromText(text, this.file, this.deps.scheduler) };
      } catch (error) {
        outcome = { error: error as Error };
      }
      this.last = text === undefined ? undefined : { text, outcome };
      if ('error' in outcome) throw outcome.error;
      return outcome.registry;
    }
    if ('error' in this.last.outcome) throw this.last.outcome.error;
    return this.last.outcome.registry;
  }
}
