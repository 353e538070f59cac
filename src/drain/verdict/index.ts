// The entry of drain/verdict/: what the folders beside it may use.
export * from './after-agent.js';
export * from './after-integration.js';
export * from './after-review.js';
export * from './batch.js';
export * from './git-locks.js';
export * from './leftover.js';
export * from './outcome.js';
export * from './review.js';
export * from './task.js';
