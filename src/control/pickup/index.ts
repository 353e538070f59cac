// The entry of control/pickup/: the push webhook receiver and its pure decisions.
export * from './delivery.js';
export * from './receiver.js';
export * from './origin-config.js';
export * from './secret.js';
