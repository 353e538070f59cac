// The entry of control/registry/: what the folders beside it may use.
export * from './cached.js';
export * from './parse.js';
export * from './notify.js';
