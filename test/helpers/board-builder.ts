// Builder fakes for the board's pure modules, and a renderer of task files in
// the exact bytes the Backlog.md CLI writes (checked against the real CLI in
// test/contract/backlog-cli.test.ts).
import type { AcceptanceCriterion, Board, Priority, Task, UnreadableTask } from '../../src/types.js';
import { DEFAULT_STATUSES } from '../../src/board/read.js';
import { yamlScalar } from '../../src/board/yaml-scalar.js';

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

export interface TaskFileFields {
  id: string;
  title: string;
  status?: string;
  assignee?: readonly string[];
  /** 'YYYY-MM-DD HH:mm', as the CLI writes it. */
  createdDate: string;
  updatedDate?: string;
  labels?: readonly string[];
  dependencies?: readonly string[];
  priority?: Priority;
  ordinal?: number;
  description?: string;
  acceptanceCriteria?: readonly (string | Pick<AcceptanceCriterion, 'text' | 'checked'>)[];
  notes?: string;
}

function yamlList(key: string, items: readonly string[] | undefined): string {
  if (!items?.length) return `${key}: []\n`;
  return `${key}:\n${items.map((item) => `  - ${yamlScalar(item)}\n`).join('')}`;
}

/** A task file, byte for byte as `backlog task create` writes it (titles up to ~78 characters). */
export function taskFileText(fields: TaskFileFields): string {
  const frontmatter = [
    `id: ${fields.id}\n`,
    `title: ${yamlScalar(fields.title)}\n`,
    `status: ${yamlScalar(fields.status ?? 'To Do')}\n`,
    yamlList('assignee', fields.assignee),
    `created_date: ${yamlScalar(fields.createdDate)}\n`,
    fields.updatedDate === undefined ? '' : `updated_date: ${yamlScalar(fields.updatedDate)}\n`,
    yamlList('labels', fields.labels),
    yamlList('dependencies', fields.dependencies),
    fields.priority === undefined ? '' : `priority: ${fields.priority}\n`,
    fields.ordinal === undefined ? '' : `ordinal: ${fields.ordinal}\n`,
  ].join('');
  const sections: string[] = [];
  if (fields.description) {
    sections.push(`## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n${fields.description}\n<!-- SECTION:DESCRIPTION:END -->\n`);
  }
  if (fields.acceptanceCriteria?.length) {
    const lines = fields.acceptanceCriteria.map((criterion, index) => {
      const { text, checked } = typeof criterion === 'string' ? { text: criterion, checked: false } : criterion;
      return `- [${checked ? 'x' : ' '}] #${index + 1} ${text}\n`;
    });
    sections.push(`## Acceptance Criteria\n<!-- AC:BEGIN -->\n${lines.join('')}<!-- AC:END -->\n`);
  }
  if (fields.notes) {
    sections.push(`## Implementation Notes\n\n<!-- SECTION:NOTES:BEGIN -->\n${fields.notes}\n<!-- SECTION:NOTES:END -->\n`);
  }
  const body = sections.length ? `\n${sections.join('\n')}` : '\n\n';
  return `---\n${frontmatter}---\n${body}`;
}
