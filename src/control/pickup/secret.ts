// The webhook's secret, from the file the registry names: root's own,
// private, one regular file reached without following a link, so no repo
// user can plant or read it. Read once when the receiver starts (a rotated
// secret needs a restart of the receiver).
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import { configValueError, UsageError } from '../../errors.js';

const SECRET_MAX_BYTES = 4096;

export async function readWebhookSecret(
  fs: Pick<FsPort, 'statUntrusted' | 'readUntrusted'>,
  file: string,
  registryFile: string,
): Promise<string> {
  const refuse = (problem: string, fix: string) =>
    new UsageError(configValueError(registryFile, 'defaults.webhook_secret_file', `${file} ${problem}`, fix));
  const fixMode = `chown root:root ${file} && chmod 600 ${file}`;
  const relative = path.relative('/', file);
  let stat;
  try {
    stat = await fs.statUntrusted('/', relative);
  } catch (error) {
    throw refuse(`cannot be reached without following a link (${(error as Error).message})`, 'name the real path');
  }
  if (!stat) throw refuse('does not exist', `create it: ( umask 077; openssl rand -hex 32 > ${file} )`);
  if (stat.isSymlink || !stat.isFile) throw refuse('is not a regular file', 'name the file itself, not a link');
  if (stat.uid !== 0) throw refuse(`is owned by uid ${stat.uid}, not root`, fixMode);
  if ((stat.mode & 0o077) !== 0)
    throw refuse(`is mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}: others may read the secret`, fixMode);
  const secret = ((await fs.readUntrusted('/', relative, SECRET_MAX_BYTES)) ?? '').trim();
  if (secret.length < 16 || secret.includes('\n'))
    throw refuse(
      'must hold the secret alone on one line, at least 16 characters',
      `( umask 077; openssl rand -hex 32 > ${file} ), and give GitHub the same secret`,
    );
  return secret;
}
