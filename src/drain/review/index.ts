// The entry of drain/review/: what the folders beside it may use.
export * from './prompt.js';
export * from './records.js';
export * from './reviewer.js';
export * from './schema.js';
export * from './setup.js';
export * from './stage.js';
export * from './trailer.js';
export * from './types.js';
export * from './verdict-doc.js';
