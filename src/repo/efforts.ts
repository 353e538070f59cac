// The reasoning efforts each assistant accepts: one list per assistant, and
// one check that the config, a task's effort:<level> label and the --effort
// flag all go through. Pure.
import type { AssistantName } from '../types.js';

/**
 * claude: `claude --help` (2.1.x) lists low, medium, high, xhigh, max.
 * codex: model_reasoning_effort is minimal, low, medium, high or xhigh
 * (codex passes any string on and the API refuses it mid-run, so we check).
 * command: the runner's own agents get the value as given; any of the above.
 */
export const EFFORTS: Readonly<Record<AssistantName, readonly string[]>> = {
  claude: ['low', 'medium', 'high', 'xhigh', 'max'],
  codex: ['minimal', 'low', 'medium', 'high', 'xhigh'],
  command: ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
};

/** Every effort some assistant accepts. */
export const ALL_EFFORTS: readonly string[] = [...new Set(Object.values(EFFORTS).flat())];

/** Why `effort` is not one `assistant` accepts, or undefined when it is. */
export function effortProblem(assistant: AssistantName, effort: string): string | undefined {
  const allowed = EFFORTS[assistant];
  return allowed.includes(effort)
    ? undefined
    : `${JSON.stringify(effort)} is not an effort ${assistant} accepts (${allowed.join(', ')})`;
}
