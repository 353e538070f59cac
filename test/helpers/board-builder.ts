// Builder fakes for the board's pure modules, and a renderer of task files in
// the exact bytes the Backlog.md CLI writes (checked against the real CLI in
// test/contract/backlog-cli.test.ts).
import type { Board, Task, UnreadableTask } from '../../src/types.js';
import { DEFAULT_STATUSES } from '../../src/board/status.js';
import { renderTaskFile } from '../../src/board/render.js';

export function aTask(fields: Partial<Task> & { id: string }): Task {
  const number = fields.id.slice(fields.id.lastIndexOf('-') + 1);
  return {
    title: `Task ${number}`,
    status: 'To Do',
    labels: [],
    dependencies: [],
    priority: undefined,
    ordinal: undefined,
    assignee: [],
    description: '',
    acceptanceCriteria: [],
    notes: '',
    file: `backlog/tasks/${fields.id.toLowerCase()} - Task-${number}.md`,
    ...fields,
  };
}

export class BoardBuilder {
  private readonly tasks: Task[] = [];
  private readonly unreadable: UnreadableTask[] = [];
  private statuses: readonly string[] = DEFAULT_STATUSES;

  withTask(task: Task | (Partial<Task> & { id: string })): this {
    this.tasks.push(aTask(task));
    return this;
  }

  withUnreadable(entry: UnreadableTask): this {
    this.unreadable.push(entry);
    return this;
  }

  withStatuses(statuses: readonly string[]): this {
    this.statuses = statuses;
    return this;
  }

  build(): Board {
    return { tasks: [...this.tasks], unreadable: [...this.unreadable], statuses: this.statuses };
  }
}

export function aBoard(): BoardBuilder {
  return new BoardBuilder();
}

export type { TaskFileFields } from '../../src/board/render.js';

/** A task file, byte for byte as `backlog task create` writes it (titles up to ~78 characters). */
export const taskFileText = renderTaskFile;
