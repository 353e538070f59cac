// The baseline: the same git work a drain does, as a plain bash script with
// no control plane. Per task: worktree add -b from the staging branch, run the
// same agent (write a file, set the task Done, commit), `parallel` tasks at a
// time (xargs -P); then, one task at a time under flock: merge --no-ff into
// staging, run the gate, remove the worktree, delete the branch. Git makes
// concurrent `worktree add` of distinct branches safe (it locks each new
// worktree while it is created), so the checkout is not serialized here.
// Like a drain it starts with a fetch and a staging worktree and ends with a
// push of the staging branch.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { Copy, Sandbox } from './repo.js';
import { readCpu, underTime, type CpuTime } from './cpu.js';

export const SHELL_BASELINE = `#!/bin/bash
# usage: baseline.sh CLONE WORKTREES AGENT PARALLEL TASK-ID...
set -euo pipefail
repo=$1 wt=$2 agent=$3 parallel=$4
shift 4
mkdir -p "$wt"
cd "$repo"
git fetch -q --prune origin
git branch -q --no-track staging origin/main
git worktree add -q "$wt/staging" staging

one_task() {
  local id=$1 dir="$wt/$1"
  git -C "$repo" worktree add -q -b "b/$id" "$dir" staging
  (cd "$dir" && AGENT_TASK_ID=$id AGENT_WORKSPACE=$dir "$agent" </dev/null >/dev/null)
  flock "$wt/integrator.lock" bash -c '
    set -euo pipefail
    cd "$1/staging"
    git merge -q --no-ff --no-edit -m "Land $2" "b/$2"
    ./.agent/gates.sh >/dev/null
    git -C "$3" worktree remove --force "$1/$2"
    git -C "$3" branch -q -D "b/$2"
  ' _ "$wt" "$id" "$repo"
}
export -f one_task
export repo wt agent
printf '%s\\n' "$@" | xargs -P "$parallel" -n 1 bash -c 'one_task "$1"' _
git push -q origin staging
`;

export function writeShellBaseline(sandbox: Sandbox): string {
  return sandbox.script('baseline.sh', SHELL_BASELINE);
}

export interface BaselineRun {
  readonly seconds: number;
  readonly cpu: CpuTime | undefined;
}

/** Runs the baseline on a fresh copy; resolves with wall-clock seconds and CPU time. */
export function runShellBaseline(
  sandbox: Sandbox,
  script: string,
  copy: Copy,
  agent: string,
  parallel: number,
  taskIds: readonly string[],
): Promise<BaselineRun> {
  const worktrees = path.join(path.dirname(copy.clone), 'baseline-worktrees');
  const report = path.join(path.dirname(copy.clone), 'cpu-usage');
  const command = underTime(['bash', script, copy.clone, worktrees, agent, String(parallel), ...taskIds], report);
  const started = process.hrtime.bigint();
  const child = spawn(command.program, command.args, { env: sandbox.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) reject(new Error(`shell baseline exited ${code}: ${stderr.slice(-2000)}`));
      else resolve({ seconds, cpu: readCpu(report) });
    });
  });
}

/** Number of merge commits on the baseline's staging branch: proves it landed every task. */
export function baselineLandings(sandbox: Sandbox, copy: Copy): number {
  return Number(sandbox.git(copy.clone, 'rev-list', '--count', '--merges', 'origin/main..staging'));
}
