// The entry of control/repo-view/: what the folders beside it may use.
export * from './board.js';
export * from './landings.js';
export * from './workspace-files.js';
export * from './git-view.js';
