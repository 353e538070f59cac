// The entry of control/pull-request/: what the folders beside it may use.
export * from './after-drain.js';
export * from './record.js';
