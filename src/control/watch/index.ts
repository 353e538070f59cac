// The entry of control/watch/: what the folders beside it may use.
export * from './pause.js';
export * from './status.js';
