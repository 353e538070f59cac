// The repo's .agent/config.json read from a workspace (config.ts parses and
// validates it; this file only reads).
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import { PathError, UsageError, configValueError } from '../errors.js';
import { CONFIG_FILE, parseRepoConfig, type ConfigValidation } from './config.js';

/** Reads and validates the repo's config; a missing file means the defaults. Throws UsageError with every problem. */
export async function readRepoConfig(fs: FsPort, workspace: string): Promise<ConfigValidation> {
  const file = path.join(workspace, CONFIG_FILE);
  let text: string | undefined;
  try {
    text = await fs.readTextIfExists(file);
  } catch (error) {
    if (error instanceof PathError) throw error;
    throw new UsageError(
      configValueError(
        file,
        '(file)',
        `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
        'make it a plain file the repo user can read, or remove it',
      ),
    );
  }
  return parseRepoConfig(text, file);
}
