// A task's escalation labels (model:<id>, effort:<level>) checked against the
// assistant that would run it. One check, used by readiness (`next`, the
// drain and root's board snapshot: a task whose labels its assistant cannot
// take is not ready, so no drain starts it) and by the run itself
// (resolveModelChoice, so a task never runs on a guess). Each label is
// checked on its own (an empty value, a value its assistant does not accept);
// two labels of one kind asking for different values are refused too, since
// neither can be said to win. Pure.
import type { AssistantName, LabelCheck, LabelProblem, Task } from '../types.js';
import { ALL_EFFORTS, EFFORTS, effortProblem } from './efforts.js';
import { modelIdProblem } from './model-id.js';

const MODEL = 'model:';
const EFFORT = 'effort:';

/** `prefix`'s value of a label (the prefix in any case, the value trimmed), or undefined when it is another label. */
function valueOf(label: string, prefix: string): string | undefined {
  const trimmed = label.trim();
  return trimmed.toLowerCase().startsWith(prefix) ? trimmed.slice(prefix.length).trim() : undefined;
}

/**
 * The escalation labels of `task` that `assistant` cannot take, with the fix for each. `assistant` undefined: the
 * repo's config could not be read, so an effort is checked against every assistant's list.
 */
export function escalationProblems(assistant: AssistantName | undefined, task: Pick<Task, 'labels'>): LabelProblem[] {
  const efforts = assistant ? EFFORTS[assistant] : ALL_EFFORTS;
  const who = assistant ?? 'any assistant';
  const problems: LabelProblem[] = [];
  const models = new Map<string, string[]>();
  const wanted = new Map<string, string[]>();
  const add = (into: Map<string, string[]>, value: string, label: string) =>
    into.set(value, [...(into.get(value) ?? []), label]);
  for (const label of task.labels) {
    const model = valueOf(label, MODEL);
    if (model === '')
      problems.push({
        label,
        problem: 'has no model id',
        fix: 'write the model id (model:sonnet), or remove the label',
      });
    else if (model !== undefined) {
      const wrong = modelIdProblem(model);
      if (wrong)
        problems.push({
          label,
          problem: wrong,
          fix: 'write the model id as the assistant takes it (model:claude-sonnet-4-5), or remove the label',
        });
      else add(models, model, label);
    }
    const effort = valueOf(label, EFFORT);
    if (effort === '')
      problems.push({
        label,
        problem: `has no effort; ${who} accepts ${efforts.join(', ')}`,
        fix: 'write one of them (effort:high), or remove the label',
      });
    else if (effort !== undefined) {
      const wrong = assistant
        ? effortProblem(assistant, effort)
        : efforts.includes(effort)
          ? undefined
          : `${JSON.stringify(effort)} is not an effort any assistant accepts (${efforts.join(', ')})`;
      if (wrong) problems.push({ label, problem: wrong, fix: 'set it to one of those, or remove the label' });
      else add(wanted, effort, label);
    }
  }
  for (const [kind, values] of [
    ['models', models],
    ['efforts', wanted],
  ] as const) {
    if (values.size < 2) continue;
    problems.push({
      label: [...values.values()].flat().join(', '),
      problem: `ask for different ${kind} (${[...values.keys()].join(', ')}), and none of them wins`,
      fix: `keep one ${kind === 'models' ? MODEL : EFFORT} label`,
    });
  }
  return problems;
}

/** The check readiness takes for a repo whose tasks `assistant` runs (undefined: its config could not be read). */
export function labelCheckFor(assistant: AssistantName | undefined): LabelCheck {
  return (task) => escalationProblems(assistant, task);
}
