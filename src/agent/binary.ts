// Which executable an agent session starts. Resolved once, before any work,
// so a missing CLI is a clear usage error and not a crashed session.
import * as path from 'node:path';
import type { ProcessPort } from '../ports.js';
import type { AgentAdapter, RepoConfig } from '../types.js';
import { UsageError } from '../errors.js';

export async function resolveAgentBinary(
  process: ProcessPort,
  adapter: AgentAdapter,
  config: RepoConfig,
  workspace: string,
  pathVariable: string,
): Promise<string> {
  if (adapter.name === 'command') {
    const program = config.command?.[0];
    if (!program)
      throw new UsageError(
        '.agent/config.json: command: is required when "assistant" is "command"; set it to the agent argv',
      );
    // A relative program path is the repo's own script.
    const candidate = program.includes('/') && !path.isAbsolute(program) ? path.join(workspace, program) : program;
    const found = await process.which(candidate, pathVariable);
    if (!found)
      throw new UsageError(
        `agent command ${program} was not found or is not executable (PATH=${pathVariable}); fix "command" in .agent/config.json`,
      );
    // A repo script stays relative: each session runs the copy in its own worktree.
    return candidate === program ? found : program;
  }
  const found = await process.which(adapter.defaultBinary, pathVariable);
  if (!found)
    throw new UsageError(
      `${adapter.defaultBinary} is not on PATH (${pathVariable}); install it for this user or choose another assistant`,
    );
  return found;
}
