// The real scheduler: node-cron, one task per repo, never overlapping itself.
import { schedule as cronSchedule } from 'node-cron';
import type { Scheduler } from '../control/watch.js';

export const cronScheduler: Scheduler = {
  schedule(expression, fn) {
    const task = cronSchedule(expression, () => fn(), { noOverlap: true });
    return {
      stop: () => {
        void task.destroy();
      },
    };
  },
};
