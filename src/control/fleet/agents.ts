// The tasks a repo's drain says are running, for root's fleet view. The
// records live in the repo user's own state dir, which the user (and so an
// agent) can write: they are read without following links (FsPort's
// untrusted walk from the user's home), bounded in count and size, validated
// by the drain's own parser, and only ever displayed. Root never signals a
// process named there.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import { processRecordsDir, repoUserStateDir, workspaceStateDir } from '../../paths.js';
import { MAX_PROCESS_RECORD_BYTES, parseProcessRecord } from '../../drain/recovery/process-records.js';
import { UntrustedPathError } from '../../errors.js';

/** More records than this is not a drain (max_parallel is at most 64). */
const MAX_RECORDS = 256;

/** Task ids with a running-agent record under `home` for `workspace`, sorted; malformed records are skipped. */
export async function runningAgentTasks(fs: FsPort, home: string, workspace: string): Promise<string[]> {
  const agentsDir = path.relative(home, processRecordsDir(workspaceStateDir(repoUserStateDir(home), workspace)));
  const names = (await fs.listUntrusted(home, agentsDir, MAX_RECORDS))
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .sort();
  const tasks: string[] = [];
  for (const name of names) {
    let text: string | undefined;
    try {
      text = await fs.readUntrusted(home, path.join(agentsDir, name), MAX_PROCESS_RECORD_BYTES);
    } catch (error) {
      // A link, a FIFO or an oversized file where a record should be: not a record.
      if (error instanceof UntrustedPathError) continue;
      throw error;
    }
    const record = text === undefined ? undefined : parseProcessRecord(name, text, path.join(home, agentsDir, name));
    if (record?.kind === 'agent') tasks.push(record.taskId);
  }
  return tasks;
}
