// The process's own terminal and standard streams, for the composition root.
export { closableWriter } from './streams.js';
export { askOnTerminal } from './question.js';
