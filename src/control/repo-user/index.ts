// The entry of control/repo-user/: what the folders beside it may use.
export * from './handoff-folders.js';
export * from './home-secrets.js';
export * from './identities.js';
export * from './privdrop.js';
export * from './run-as.js';
