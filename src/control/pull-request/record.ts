// <state>/repos/NAME/pull-request.json: the staging pull request as the
// watcher last saw it (number, URL, state, mergeable, the checks on the
// staging head), for status, fleet and the dashboard without an API call per
// refresh. Root writes it from the JSON a `promote --pr` run as the repo user
// printed: that output is the user's, so it is validated and bounded here
// and shown only through the terminal guard.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import { repoStateDir } from '../../paths.js';
import { ensureRepoStateDir } from '../state-dirs.js';

export interface PullRequestRecord {
  readonly at: string;
  /** opened, updated, merged, nothing-to-promote, or failed. */
  readonly action: string;
  /** The promote exit code: 75 is "checks still pending". */
  readonly exitCode: number;
  readonly number: number | null;
  readonly url: string | null;
  readonly state: 'open' | 'closed' | null;
  readonly merged: boolean;
  readonly mergeable: boolean | null;
  readonly headSha: string | null;
  readonly checks: readonly { readonly name: string; readonly state: string; readonly conclusion: string }[];
  readonly detail: string;
}

export function pullRequestRecordFile(state: string, repo: string): string {
  return path.join(repoStateDir(state, repo), 'pull-request.json');
}

const text = (value: unknown, max: number): string | null => (typeof value === 'string' ? value.slice(0, max) : null);

/**
 * Pure: a record from `promote --pr --json` output (the last JSON line), bounded; stderr's last line when it failed.
 */
export function pullRequestRecordFrom(stdout: string, stderr: string, exitCode: number, at: string): PullRequestRecord {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((entry) => entry.startsWith('{'));
  let json: Record<string, unknown>;
  try {
    json = line && line.length < 256 * 1024 ? (JSON.parse(line) as Record<string, unknown>) : {};
  } catch {
    json = {};
  }
  const pr = (typeof json.pr === 'object' && json.pr !== null ? json.pr : {}) as Record<string, unknown>;
  const checks = Array.isArray(pr.checks) ? pr.checks.slice(0, 100) : [];
  const lastError = stderr.trim().split('\n').at(-1) ?? '';
  return {
    at,
    action: exitCode === 0 || exitCode === 75 ? (text(json.action, 40) ?? 'unknown') : 'failed',
    exitCode,
    number: Number.isInteger(pr.number) ? (pr.number as number) : null,
    url: text(pr.url, 500),
    state: pr.state === 'open' || pr.state === 'closed' ? pr.state : null,
    merged: pr.merged === true,
    mergeable: typeof pr.mergeable === 'boolean' ? pr.mergeable : null,
    headSha: typeof pr.headSha === 'string' && /^[0-9a-f]{40}$/.test(pr.headSha) ? pr.headSha : null,
    checks: checks.map((check: Record<string, unknown>) => ({
      name: text(check?.name, 200) ?? '?',
      state: text(check?.state, 20) ?? '?',
      conclusion: text(check?.conclusion, 40) ?? '?',
    })),
    detail: (exitCode === 0 ? text(json.detail, 500) : lastError.slice(0, 500)) ?? '',
  };
}

export async function writePullRequestRecord(
  fs: FsPort,
  state: string,
  repo: string,
  record: PullRequestRecord,
): Promise<void> {
  await ensureRepoStateDir(fs, state, repo);
  await fs.writeAtomic(pullRequestRecordFile(state, repo), `${JSON.stringify(record, null, 2)}\n`, 0o600);
}

export async function readPullRequestRecord(
  fs: FsPort,
  state: string,
  repo: string,
): Promise<PullRequestRecord | undefined> {
  const content = await fs.readTextIfExists(pullRequestRecordFile(state, repo));
  if (content === undefined) return undefined;
  try {
    return JSON.parse(content) as PullRequestRecord;
  } catch {
    return undefined;
  }
}

/** Pure: the one-cell summary the fleet table and the dashboard show. */
export function pullRequestCell(record: PullRequestRecord | undefined): string {
  if (!record) return '';
  if (record.number === null) return record.action === 'failed' ? 'PR ?' : '';
  const red = record.checks.filter((check) => check.state === 'failure').length;
  const pending = record.checks.filter((check) => check.state === 'pending').length;
  const checks = red ? `${red} red` : pending ? `${pending} pending` : record.checks.length ? 'green' : 'no checks';
  return record.merged ? `PR #${record.number} merged` : `PR #${record.number} ${record.state ?? '?'} ${checks}`;
}
