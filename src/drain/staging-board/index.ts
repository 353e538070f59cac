// The entry of drain/staging-board/: what the folders beside it may use.
export * from './edits.js';
export * from './reader.js';
