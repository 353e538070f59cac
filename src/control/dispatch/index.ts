// The entry of control/dispatch/: what the folders beside it may use.
export * from './dispatch.js';
export * from './limits.js';
export * from './user-sweep.js';
export * from './launcher.js';
