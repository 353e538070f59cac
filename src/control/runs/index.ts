// The entry of control/runs/: what the folders beside it may use.
export * from './record.js';
export * from './history.js';
