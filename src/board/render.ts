// A new task file, byte for byte as `backlog task create` writes it, for
// code that files tasks (the demo, enqueue --prompt). Checked against the real
// CLI in test/contract/backlog-cli.test.ts.
import type { AcceptanceCriterion, Priority } from '../types.js';
import { yamlScalar } from './yaml-scalar.js';

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

export function renderTaskFile(fields: TaskFileFields): string {
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
    sections.push(
      `## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n${fields.description}\n<!-- SECTION:DESCRIPTION:END -->\n`,
    );
  }
  if (fields.acceptanceCriteria?.length) {
    const lines = fields.acceptanceCriteria.map((criterion, index) => {
      const { text, checked } = typeof criterion === 'string' ? { text: criterion, checked: false } : criterion;
      return `- [${checked ? 'x' : ' '}] #${index + 1} ${text}\n`;
    });
    sections.push(`## Acceptance Criteria\n<!-- AC:BEGIN -->\n${lines.join('')}<!-- AC:END -->\n`);
  }
  if (fields.notes) {
    sections.push(
      `## Implementation Notes\n\n<!-- SECTION:NOTES:BEGIN -->\n${fields.notes}\n<!-- SECTION:NOTES:END -->\n`,
    );
  }
  const body = sections.length ? `\n${sections.join('\n')}` : '\n\n';
  return `---\n${frontmatter}---\n${body}`;
}

/**
 * The file name the CLI gives a task: "task-3 - Title-with-dashes.md".
 * Characters no file system takes become dashes, other punctuation goes,
 * letters of any script stay; checked against the CLI in
 * test/contract/backlog-filenames.test.ts.
 */
export function taskFileName(id: string, title: string): string {
  const slug =
    title
      .replace(/[\\/:*?"<>|]/g, '-')
      .replace(/[^\p{L}\p{N}\s._-]/gu, '')
      .trim()
      .replace(/\s+/g, '-')
      .replace(/-+/g, '-') || 'task';
  return `${id.toLowerCase()} - ${slug}.md`;
}
