// The entry of control/notify/: webhooks told of a repo's events. Events are
// derived from what root already records (derive.ts, pure), spooled one file
// each (outbox.ts) and delivered off the watcher's loop (sender.ts).
export * from './kinds.js';
export * from './url.js';
export * from './derive.js';
export * from './body.js';
export * from './outbox.js';
export * from './sender.js';
export * from './notifier.js';
