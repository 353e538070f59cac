// The demo's repository, as data: a small project whose Backlog.md board
// walks every path of a drain. Each task's description carries the bundled
// scripted agent's instruction block (docs/agents.md).
import type { TaskFileFields } from '../board/render.js';

export interface DemoTask extends Omit<TaskFileFields, 'createdDate'> {
  /** What the demo expects to happen, shown next to the outcome. */
  readonly expect: 'landed' | 'parked' | 'blocked' | 'not started';
}

export const DEMO_TASKS: readonly DemoTask[] = [
  {
    id: 'TASK-1',
    title: 'Set the version to 2.0.0',
    priority: 'high',
    expect: 'landed',
    description: 'Bump the version for the next release.\n\nagent: sleep 0.5\nagent: write VERSION "2.0.0"',
    acceptanceCriteria: ['VERSION says 2.0.0'],
  },
  {
    id: 'TASK-2',
    title: 'Set the version to 2.1.0-rc',
    priority: 'high',
    expect: 'landed',
    description:
      'Started together with TASK-1 and edits the same line, so one of the two conflicts and is retried on top of the other.\n\nagent: sleep 0.5\nagent: write VERSION "2.1.0-rc"',
    acceptanceCriteria: ['VERSION says 2.1.0-rc'],
  },
  {
    id: 'TASK-3',
    title: 'Add the greeting module',
    priority: 'high',
    expect: 'landed',
    description:
      'Its first session hits a rate limit: the task waits for the reset, is not charged an attempt, and lands.\n\nagent: rate-limit 1\nagent: sleep 0.5\nagent: write src/greeting.txt "hello"',
    acceptanceCriteria: ['src/greeting.txt exists'],
  },
  {
    id: 'TASK-4',
    title: 'Use the greeting in the banner',
    priority: 'medium',
    dependencies: ['TASK-3'],
    expect: 'landed',
    description:
      'Depends on TASK-3: it becomes ready when TASK-3 lands, within the same drain. Its reviewer asks for a change once; a fix round on the same branch answers it and the second review approves.\n\nagent: write src/banner.txt "hello, world"\nreview: changes "the banner does not say where the greeting comes from" 1\nfix: append src/banner.txt "(greeting from src/greeting.txt)"',
    acceptanceCriteria: ['src/banner.txt uses the greeting'],
  },
  {
    id: 'TASK-5',
    title: 'Document the API',
    priority: 'medium',
    labels: ['area:docs'],
    expect: 'landed',
    description:
      'Shares the docs area with TASK-6: the two never run at the same time.\n\nagent: sleep 1\nagent: write docs/api.md "# API"',
  },
  {
    id: 'TASK-6',
    title: 'Document the CLI',
    priority: 'medium',
    labels: ['area:docs'],
    expect: 'parked',
    description:
      'Its reviewer finds the same gap after the fix round, so review parks it with the finding (the branch is kept).\n\nagent: sleep 1\nagent: write docs/cli.md "# CLI"\nreview: same-finding "docs/cli.md lists no command"\nfix: append docs/cli.md "(commands to follow)"',
    acceptanceCriteria: ['docs/cli.md documents every command'],
  },
  {
    id: 'TASK-7',
    title: 'Switch the build to the experimental compiler',
    priority: 'low',
    expect: 'parked',
    description:
      'The change merges cleanly but turns the gate red, so it is parked with the gate output.\n\nagent: write BROKEN "the experimental compiler breaks the build"',
  },
  {
    id: 'TASK-8',
    title: 'Rotate the production API key',
    priority: 'low',
    expect: 'blocked',
    description: 'agent: block "needs the production credential, which agents never get"',
  },
  {
    id: 'TASK-9',
    title: 'Drop the legacy database',
    priority: 'high',
    labels: ['risk:needs-human'],
    expect: 'not started',
    description: 'Labeled risk:needs-human: never started by an agent.',
  },
];

export const DEMO_GATES = `#!/bin/sh
# The demo's gate: red when the tree carries the BROKEN marker.
if [ -e BROKEN ]; then
  echo "gate: build failed: $(cat BROKEN)" >&2
  exit 1
fi
echo "gate: all checks passed"
`;

export const DEMO_BACKLOG_CONFIG = `project_name: "agent-runner demo"
default_status: "To Do"
statuses: ["To Do", "In Progress", "Blocked", "Done"]
labels: []
date_format: yyyy-mm-dd
max_column_width: 20
auto_open_browser: false
default_port: 6420
remote_operations: false
auto_commit: false
filesystem_only: false
bypass_git_hooks: false
check_active_branches: false
active_branch_days: 30
task_prefix: "task"
`;

/**
 * The demo's assistant is claude, its reviewer codex (the other CLI); both binaries are the bundled scripted agent
 * posing as them (usage, costs, rate limits, verdicts and all).
 */
export function demoConfig(): string {
  return `${JSON.stringify({ assistant: 'claude', maxParallel: 3, maxAttempts: 2, agentIdleTimeoutSec: 60, workBranchMode: 'accumulate', review: { enabled: true } }, null, 2)}\n`;
}

/** Rate-limit waits short enough for a demo (a real repo waits at least a minute). */
export const DEMO_SPEND_LIMITS = {
  dailyUsd: undefined,
  dailyTokens: undefined,
  taskUsd: undefined,
  rateLimitWaitMinSec: 1,
  rateLimitWaitMaxSec: 2,
} as const;

export const DEMO_README = '# Demo project\n\nA tiny repository for the agent-runner demo.\n';
