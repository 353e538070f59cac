// The entry of drain/recovery/: what the folders beside it may use.
export * from './git-locks.js';
export * from './orphan-processes.js';
export * from './process-records.js';
export * from './task-branches.js';
export * from './workspace-lock.js';
