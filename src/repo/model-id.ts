// What a model id may be, as a claude --model or codex -m argument: one rule
// for .agent/config.json's "model", the --model flags and a task's
// model:<id> label. The ids in use are letters, digits and . _ : / @ [ ] -
// (claude-sonnet-4-5, us.anthropic.claude-3-7-sonnet-20250219-v1:0,
// claude-3-5-sonnet@20240620, anthropic/claude-3.5-sonnet, sonnet[1m]);
// anything else (a leading -, a space, a quote, $ ; | & or a newline) could
// read as another flag or smuggle text into an argument, and is refused before
// it becomes one. Pure.

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,99}$/;

/** The rule in words, for messages. */
export const MODEL_ID_RULE = 'a letter or digit, then letters, digits and . _ : / @ [ ] - (at most 100 characters)';

/** Why `model` is not a model id, or undefined when it is. */
export function modelIdProblem(model: string): string | undefined {
  return MODEL_ID.test(model) ? undefined : `${JSON.stringify(model)} is not a model id (${MODEL_ID_RULE})`;
}
