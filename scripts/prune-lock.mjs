#!/usr/bin/env node
// npm records a package's optional platform dependencies in package-lock.json
// even when the registry serves none of them for other platforms
// (backlog.md-darwin-*, -windows-*, -linux-arm64 here), and `npm ci` then
// refuses the lock as out of sync. This drops optional dependencies that have
// no entry in the lock. Run it after every `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const removed = [];
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    const nested = key ? `${key}/node_modules/${name}` : `node_modules/${name}`;
    if (!lock.packages[nested] && !lock.packages[`node_modules/${name}`]) {
      delete entry.optionalDependencies[name];
      removed.push(`${key || '(root)'} -> ${name}`);
    }
  }
}
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(removed.length ? `pruned:\n${removed.join('\n')}` : 'nothing to prune');
