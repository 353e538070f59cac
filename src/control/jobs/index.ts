// The entry of control/jobs/: what the folders beside it may use.
export * from './prompt-task.js';
export * from './spool.js';
