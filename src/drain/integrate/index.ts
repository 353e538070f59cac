// The entry of drain/integrate/: what the folders beside it may use.
export * from './batch.js';
export * from './branch.js';
export * from './protected-paths.js';
export * from './gate.js';
export * from './queue.js';
export * from './trusted-config.js';
