// Every change to a repo's Jobs, with none lost: list, then watch from the list's resourceVersion; a watch the server
// closes is taken up again from the last resourceVersion seen (events or bookmarks); a 410 (that version is gone
// from the server's history) or a broken stream lists again, and a list reports every Job as it is now, so a Job
// that completed while nobody watched is seen complete. A listener may see the same state twice; it never misses the
// last one. The pause between failed attempts comes from the clock port, so tests drive it.
import type { V1Job } from '@kubernetes/client-node';
import type { Clock } from '../../../src/ports.js';
import type { KubeJobs, KubeStream, WatchEvent } from '../port.js';

export type JobChange = 'listed' | 'ADDED' | 'MODIFIED' | 'DELETED';

export interface JobWatchOptions {
  readonly jobs: KubeJobs;
  readonly labelSelector: string;
  readonly clock: Clock;
  /** Each Job's state as it is seen. */
  readonly onJob: (job: V1Job, change: JobChange) => void;
  /** A list or watch that failed; the watch goes on after retryMs. */
  readonly onTrouble?: (error: Error) => void;
  /** The pause before listing again after a failure (default 1000). */
  readonly retryMs?: number;
}

export interface JobWatch {
  /** How many times the Jobs were listed (1 at the start, one more per relist): for tests and the drain's report. */
  readonly lists: () => number;
  stop(): Promise<void>;
}

type Next = 'watch' | 'list' | 'retry';

export async function watchJobs(options: JobWatchOptions): Promise<JobWatch> {
  const { jobs, labelSelector, clock, onJob } = options;
  let stopped = false;
  let lists = 0;
  let resourceVersion = '';
  let current: KubeStream | undefined;

  async function list(): Promise<void> {
    const listed = await jobs.listJobs(labelSelector);
    lists += 1;
    resourceVersion = listed.resourceVersion;
    for (const job of listed.items) onJob(job, 'listed');
  }

  /** One watch, to its end: what to do next. */
  async function watchOnce(): Promise<Next> {
    let next: Next = 'watch';
    const onEvent = (event: WatchEvent) => {
      if (event.type === 'ERROR') {
        next = event.status.code === 410 ? 'list' : 'retry';
        if (next === 'retry')
          options.onTrouble?.(
            new Error(`watch of Jobs (${labelSelector}): ${event.status.code} ${event.status.message}`),
          );
        return;
      }
      if (event.type === 'BOOKMARK') {
        if (event.resourceVersion) resourceVersion = event.resourceVersion;
        return;
      }
      const seen = event.object.metadata?.resourceVersion;
      if (seen) resourceVersion = seen;
      onJob(event.object, event.type);
    };
    current = await jobs.watchJobs(labelSelector, resourceVersion, onEvent);
    if (stopped) current.stop();
    const ended = await current.ended;
    // Our own stop aborts the request: not trouble.
    if (ended.error && !stopped) {
      options.onTrouble?.(ended.error);
      return 'retry';
    }
    return next;
  }

  await list();
  const loop = (async () => {
    let next: Next = 'watch';
    while (!stopped) {
      try {
        if (next === 'retry') {
          await clock.sleep(options.retryMs ?? 1000);
          if (stopped) break;
          await list();
        } else if (next === 'list') await list();
        next = await watchOnce();
      } catch (error) {
        options.onTrouble?.(error instanceof Error ? error : new Error(String(error)));
        next = 'retry';
      }
    }
  })();

  return {
    lists: () => lists,
    async stop() {
      stopped = true;
      current?.stop();
      await loop;
    },
  };
}
