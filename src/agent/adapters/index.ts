// The adapter for each assistant a repo can choose.
import type { AgentAdapter, AssistantName } from '../../types.js';
import { claudeAdapter } from './claude.js';
import { codexAdapter } from './codex.js';
import { commandAdapter } from './command.js';

const ADAPTERS: Readonly<Record<AssistantName, AgentAdapter>> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  command: commandAdapter,
};

export function adapterFor(name: AssistantName): AgentAdapter {
  return ADAPTERS[name];
}

export { brokerSessionId } from './broker.js';
