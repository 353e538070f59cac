// The real scheduler: node-cron, one task per repo, never overlapping itself.
// Its grammar is the registry's too: the registry checks a schedule with
// isValid (wired in through the Scheduler port), so what it accepts is what
// node-cron runs.
import { schedule as cronSchedule, validate } from 'node-cron';
import type { Scheduler } from '../ports.js';

export const cronScheduler: Scheduler = {
  schedule(expression, fn) {
    const task = cronSchedule(expression, () => fn(), { noOverlap: true });
    return {
      stop: () => {
        void task.destroy();
      },
    };
  },
  isValid: (expression) => validate(expression),
};
