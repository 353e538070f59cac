// The entry of control/repo-user/: what the folders beside it may use.
export * from './home-secrets.js';
export * from './privdrop.js';
export * from './run-as.js';
