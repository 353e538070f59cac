// A session's transcript: JSONL, one event a line, each stamped with the time
// and redacted before it is written; appends are chained so lines keep their
// order without holding the agent's output up.
import type { Clock, FsPort } from '../ports.js';
import { redactSecrets } from './secrets.js';

export class Transcript {
  private pending: Promise<void> = Promise.resolve();
  constructor(
    private readonly fs: FsPort,
    private readonly clock: Clock,
    private readonly file: string,
    private readonly secrets: readonly string[],
  ) {}

  write(event: Record<string, unknown>): void {
    const line = redactSecrets(
      JSON.stringify({ time: new Date(this.clock.now()).toISOString(), ...event }),
      this.secrets,
    );
    this.pending = this.pending.then(() => this.fs.appendLine(this.file, line));
  }

  flush(): Promise<void> {
    return this.pending;
  }
}
