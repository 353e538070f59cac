// The entry of control/ledger/: what the folders beside it may use.
export * from './hold.js';
export * from './ledger.js';
export * from './totals.js';
export * from './counting.js';
export * from './metered.js';
