// What review said of a task, kept in the runner's own state (where no agent
// writes): the latest verdict per task, so a drain that was killed after an
// approval lands the approved head without reviewing it again (and reviews
// any other head first), and each round's verdict file as it was taken,
// under the run that took it. The views (status, the dashboard) read these.
import * as path from 'node:path';
import type { FsPort } from '../../ports.js';
import type { TaskId } from '../../types.js';
import type { Severity } from '../../types.js';
import { reviewRecordFile, reviewsDir } from '../../paths.js';

/** One round as the runner judged it. */
export interface ReviewRound {
  readonly round: number;
  /** approved, changes (a fix round followed or it parked), unusable (why), pre-gate red. */
  readonly judgement: 'approved' | 'changes' | 'unusable' | 'pre-gate-red';
  readonly candidate: string;
  readonly detail?: string;
  readonly findings?: readonly { readonly severity: Severity; readonly location: string; readonly message: string }[];
  readonly unmet?: readonly number[];
  /** The verdict file kept for this round, relative to the reviews folder. */
  readonly verdictFile?: string;
}

export interface ReviewRecord {
  readonly v: 1;
  readonly taskId: TaskId;
  readonly runId: string;
  /** The commit the last round judged. */
  readonly candidate: string;
  readonly approved: boolean;
  /** Approved: the landing's trailer text. Else: why it did not land. */
  readonly outcome: string;
  readonly reviewer: { readonly assistant: string; readonly model: string | null };
  readonly rounds: readonly ReviewRound[];
  readonly at: string;
}

/** Where a round's verdict file is kept: under its run. */
export function keptVerdictFile(
  workspaceState: string,
  runId: string,
  taskId: TaskId,
  round: number,
  attempt: number,
): string {
  return path.join(reviewsDir(workspaceState), runId, `${taskId.toUpperCase()}-round-${round}.${attempt}.json`);
}

export class ReviewRecords {
  constructor(
    private readonly fs: FsPort,
    private readonly workspaceState: string,
  ) {}

  async prepare(runId: string): Promise<void> {
    await this.fs.mkdirp(path.join(reviewsDir(this.workspaceState), runId), 0o700);
  }

  async write(record: ReviewRecord): Promise<void> {
    await this.fs.writeAtomic(
      reviewRecordFile(this.workspaceState, record.taskId),
      `${JSON.stringify(record, null, 2)}\n`,
      0o600,
    );
  }

  async read(taskId: TaskId): Promise<ReviewRecord | undefined> {
    const text = await this.fs.readTextIfExists(reviewRecordFile(this.workspaceState, taskId));
    if (text === undefined) return undefined;
    try {
      const record = JSON.parse(text) as ReviewRecord;
      return record && record.v === 1 && typeof record.candidate === 'string' ? record : undefined;
    } catch {
      return undefined;
    }
  }

  /** The trailer of an approval of exactly `head`, if review approved it. */
  async approvalOf(taskId: TaskId, head: string): Promise<string | undefined> {
    const record = await this.read(taskId);
    return record?.approved && record.candidate === head ? record.outcome : undefined;
  }
}
