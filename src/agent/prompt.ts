// The prompt an agent receives: the repo's base prompt (or the built-in one)
// plus a directive naming the task. Pure.
import type { Task } from '../types.js';

const DEFAULT_BASE_PROMPT = `You are working unattended in a git worktree of this repository. Nobody will
answer questions; decide, and record what you decided.

Lifecycle of your task (it is a Backlog.md task file under backlog/tasks/):
1. Read the repository's own instructions (README, AGENTS.md or CLAUDE.md when
   present) and the whole task file: description, acceptance criteria, notes.
2. Set the task's status to "In Progress" (edit the file's frontmatter, or run
   \`backlog task edit <id> -s "In Progress"\`).
3. Make the change the task asks for, and only that. Keep it focused: no
   unrelated refactors, no formatting sweeps.
4. Run the repository's gates (.agent/gates.sh when present) and fix what fails.
5. Tick each acceptance criterion you satisfied (\`- [x]\`).
6. Set the status to "Done". If you cannot finish, set it to "Blocked" and add
   a note saying exactly why and what would unblock it.
7. Commit the code and the task file together in one commit.
`;

export interface PromptInput {
  /** The repo's .agent/prompt.md, when it has one. */
  readonly basePrompt: string | undefined;
  readonly task: Pick<Task, 'id' | 'title' | 'file'>;
  /** Why this is a retry, when it is one (e.g. the merge conflicted). */
  readonly retryReason?: string;
}

/** The directive line the scripted agent and the tests look for. */
export function taskDirective(task: Pick<Task, 'id' | 'title' | 'file'>): string {
  return `Your task: ${task.id} "${task.title}" (file ${task.file})`;
}

export function buildPrompt(input: PromptInput): string {
  const base = (input.basePrompt?.trim() ? input.basePrompt : DEFAULT_BASE_PROMPT).trimEnd();
  const lines = [
    base,
    '',
    taskDirective(input.task),
    `Work only on ${input.task.id}; other tasks belong to other agents.`,
  ];
  if (input.retryReason) {
    lines.push(
      '',
      `This is a retry. The previous attempt could not be integrated: ${input.retryReason}`,
      'Start from the current tree, which already contains the other work that landed since.',
    );
  }
  return `${lines.join('\n')}\n`;
}
