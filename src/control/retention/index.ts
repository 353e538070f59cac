// The entry of control/retention/: what the folders beside it may use.
export * from './daily.js';
export * from './policy.js';
