// Records a repo user's own drain keeps in its home (~/.agent-runner), as
// root reads them: through the untrusted walk from the home, so a link or a
// FIFO planted there is refused (never followed, never waited on) and a
// record is never larger than a record. What a record says is still only a
// claim: whoever acts on it checks the process it names.
import * as path from 'node:path';
import type { FsPort } from '../ports.js';
import type { AgentRecord } from '../drain-records.js';
import { repoUserStateDir, workspaceStateDir } from '../paths.js';
import { UntrustedPathError } from '../errors.js';

const MAX_RECORD_BYTES = 4096;
const MAX_RECORDS = 1024;

/** The agent records under <home>/.agent-runner/workspaces/<key>/agents; a refused or malformed one is skipped. */
export async function readUserAgentRecords(fs: FsPort, home: string, workspace: string): Promise<AgentRecord[]> {
  const dir = path.relative(home, path.join(workspaceStateDir(repoUserStateDir(home), workspace), 'agents'));
  const records: AgentRecord[] = [];
  let names: string[];
  try {
    names = await fs.listUntrusted(home, dir, MAX_RECORDS);
  } catch (error) {
    // A link (or a flood) where the records live: nothing there root may act on.
    if (error instanceof UntrustedPathError) return [];
    throw error;
  }
  for (const name of names.filter((entry) => entry.endsWith('.json')).sort()) {
    try {
      const value = JSON.parse((await fs.readUntrusted(home, path.join(dir, name), MAX_RECORD_BYTES)) ?? '') as { pid?: unknown; startTime?: unknown; taskId?: unknown };
      if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 1) {
        records.push({ pid: value.pid, startTime: typeof value.startTime === 'string' ? value.startTime : undefined, taskId: String(value.taskId ?? name.replace(/\.json$/, '')), file: path.join(home, dir, name) });
      }
    } catch (error) {
      // A link, FIFO, oversized or half-written record: nothing to act on.
      if (!(error instanceof UntrustedPathError) && !(error instanceof SyntaxError)) throw error;
    }
  }
  return records;
}
