// The pull request's title and body: what staging holds, rewritten on every
// update so the PR always says what a merge would land. Pure.
import type { PullRequestText } from './api.js';

export interface LandedTask {
  readonly taskId: string;
  readonly title: string;
  readonly gate: string;
  readonly commit: string;
}

export interface ParkedTask {
  readonly id: string;
  readonly title: string;
  readonly reason: string;
}

export interface StagingSummary {
  readonly baseBranch: string;
  readonly stagingBranch: string;
  readonly stagingSha: string;
  readonly landed: readonly LandedTask[];
  readonly parked: readonly ParkedTask[];
}

/** GitHub refuses a body over 65536 characters; stay well below. */
const MAX_BODY = 60_000;

/** Markdown table cells: one line, no pipe breaking the table, no HTML. */
function cell(text: string): string {
  return (
    text
      .replace(/[\r\n]+/g, ' ')
      .replace(/\|/g, '\\|')
      .replace(/</g, '&lt;')
      .trim() || '-'
  );
}

export function pullRequestText(summary: StagingSummary): PullRequestText {
  const count = summary.landed.length;
  const title =
    count === 0
      ? `agent-runner: ${summary.stagingBranch} (nothing landed yet)`
      : `agent-runner: ${count} task${count === 1 ? '' : 's'} landed (${summary.landed
          .map((task) => task.taskId)
          .slice(0, 5)
          .join(', ')}${count > 5 ? ', ...' : ''})`;
  const lines = [
    `Staging branch \`${summary.stagingBranch}\` at \`${summary.stagingSha.slice(0, 12)}\`, into \`${summary.baseBranch}\`.`,
    '',
    `### Landed (${count})`,
  ];
  if (count) {
    lines.push('', '| task | title | gate | landing commit |', '|---|---|---|---|');
    for (const task of summary.landed)
      lines.push(`| ${cell(task.taskId)} | ${cell(task.title)} | ${cell(task.gate)} | ${task.commit.slice(0, 12)} |`);
  } else lines.push('', 'Nothing yet.');
  lines.push('', `### Parked (${summary.parked.length})`);
  if (summary.parked.length) {
    lines.push('', '| task | title | why |', '|---|---|---|');
    for (const task of summary.parked) lines.push(`| ${cell(task.id)} | ${cell(task.title)} | ${cell(task.reason)} |`);
  } else lines.push('', 'None.');
  lines.push('', '_Written by agent-runner; rewritten on every update of this pull request._');
  let body = lines.join('\n');
  if (body.length > MAX_BODY) body = `${body.slice(0, MAX_BODY)}\n\n(cut: more than ${MAX_BODY} characters)`;
  return { title: title.slice(0, 250), body };
}
