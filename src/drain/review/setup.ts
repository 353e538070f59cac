// Who reviews in this drain: the reviewer the repo's review config asks for
// (by default the other CLI than the implementer's), found on the agent's
// PATH before any task starts, so a missing reviewer is one clear line at
// the drain's start and not a parked task per task.
import type { ProcessPort } from '../../ports.js';
import type { AssistantName, RepoConfig } from '../../types.js';
import { adapterFor } from '../../agent/adapters/index.js';
import { UsageError } from '../../errors.js';
import { chooseReviewer } from './reviewer.js';
import type { Reviewer } from './stage.js';

const CLIS: readonly AssistantName[] = ['claude', 'codex'];

export interface ReviewerFound {
  readonly reviewer: Reviewer;
  /** Why the reviewer is not the one asked for (the other CLI is not installed), in words; undefined when it is. */
  readonly fallback: string | undefined;
}

export async function findReviewer(
  process: Pick<ProcessPort, 'which'>,
  config: RepoConfig,
  pathVariable: string,
): Promise<ReviewerFound> {
  const found = new Map<AssistantName, string>();
  for (const cli of CLIS) {
    const binary = await process.which(adapterFor(cli).defaultBinary, pathVariable);
    if (binary) found.set(cli, binary);
  }
  const choice = chooseReviewer(
    config.review,
    { assistant: config.assistant, model: config.model },
    (assistant) => assistant === 'command' || found.has(assistant),
  );
  const adapter = adapterFor(choice.assistant);
  if (choice.assistant === 'command') {
    if (!config.command)
      throw new UsageError(
        '.agent/config.json: review.assistant is "command" but "command" is not set; set "command" or another review.assistant',
      );
    return {
      reviewer: {
        assistant: 'command',
        adapter,
        binary: config.command[0]!,
        model: undefined,
        command: config.command,
      },
      fallback: choice.fallback,
    };
  }
  const binary = found.get(choice.assistant);
  if (!binary)
    throw new UsageError(
      `review: ${adapter.defaultBinary} is not on the agent's PATH (${pathVariable}); install it or set review.assistant in .agent/config.json`,
    );
  return {
    reviewer: { assistant: choice.assistant, adapter, binary, model: choice.model, command: undefined },
    fallback: choice.fallback,
  };
}
