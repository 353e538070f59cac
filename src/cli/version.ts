// agent-runner --version: the version in the install's package.json.
import * as path from 'node:path';
import type { CliContext } from './context.js';
import { installRoot } from '../paths.js';

export async function installVersion(context: Pick<CliContext, 'ports' | 'selfBin'>): Promise<string> {
  const file = path.join(installRoot(context.selfBin), 'package.json');
  const text = await context.ports.fs.readTextIfExists(file);
  try {
    const version = text === undefined ? undefined : (JSON.parse(text) as { version?: unknown }).version;
    if (typeof version === 'string') return version;
  } catch {
    // falls through to the message below
  }
  return `unknown (no version in ${file})`;
}
