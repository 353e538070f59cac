// The environment an agent starts with. Nothing is inherited by accident:
// only the variables named here pass from the caller's environment, and the
// runner adds the task's own.
import type { TaskId } from '../types.js';
import { committerEnvironment } from '../git/git.js';
import { USER_PATH } from '../system-path.js';

/**
 * Variables a locally run agent legitimately needs from the operator's
 * environment. Under dispatch the caller's environment is already the clean
 * one built by agentEnvironment() in control/repo-user/privdrop.ts.
 */
const PASS_THROUGH = [
  'HOME',
  'PATH',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'TZ',
  'TERM',
  'TMPDIR',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  // Agent logins supplied by environment rather than by a file in HOME.
  'ANTHROPIC_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'CODEX_HOME',
] as const;

/**
 * `extra` names further variables to pass (orchestrate --pass-env: dispatch
 * names the registry's non-secret env for the repo this way).
 */
export function agentBaseEnv(
  callerEnv: Readonly<Record<string, string | undefined>>,
  extra: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of [...PASS_THROUGH, ...extra]) {
    const value = callerEnv[key];
    if (value !== undefined) env[key] = value;
  }
  env.PATH ??= USER_PATH;
  return env;
}

/** The variables every agent gets about its task. */
export function taskEnv(
  base: Readonly<Record<string, string>>,
  taskId: TaskId,
  workspace: string,
): Record<string, string> {
  // The agent's commits name agent-runner as committer; the author is the repo's configured identity.
  return { ...base, ...committerEnvironment(), AGENT_TASK_ID: taskId, AGENT_WORKSPACE: workspace };
}
