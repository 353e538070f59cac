// The entry of control/metrics/: what the folders beside it may use (the watcher owns an endpoint).
export * from './endpoint.js';
export * from './families.js';
export * from './facts.js';
export * from './exposition.js';
