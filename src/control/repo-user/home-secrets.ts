// The secrets root knows of a repo: the credentials in its user's home,
// read through the no-follow walk (the home is the user's: hostile input).
// Root's own sinks (relayed progress, run records) redact them with the one
// rule in agent/secrets.ts.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import { secretValues } from '../../agent/secrets.js';

/** A credentials file is small; a bigger one is not read (and its values not known). */
const MAX_CREDENTIALS_BYTES = 256 * 1024;

/** Every secret in the repo user's credential files; a file root refuses to read (a link, too big) is skipped. */
export function repoUserSecrets(fs: Pick<FsPort, 'readUntrusted'>, home: string): Promise<string[]> {
  return secretValues(
    {
      readTextIfExists: (file) =>
        fs.readUntrusted(home, path.relative(home, file), MAX_CREDENTIALS_BYTES).catch(() => undefined),
    },
    home,
  );
}
