// A Backlog.md task file -> Task, or UnreadableTask with the reason. Pure.
// The frontmatter goes through a real YAML parser; the body is read by the
// HTML-comment markers the Backlog.md CLI writes around each section.
import { parse as parseYaml } from 'yaml';
import type { AcceptanceCriterion, Priority, Task, TaskId, UnreadableTask } from '../types.js';
import { findFrontmatter } from './frontmatter.js';

/** Task files larger than this are unreadable (and never read in full). */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;

/**
 * Ids we accept: letters, a dash, a number, optional `.n` subtask parts
 * (TASK-12, task-3.1). Nothing that could act as a path, a git ref trick, an
 * option or a shell word.
 */
const SAFE_ID = /^[A-Za-z][A-Za-z0-9]{0,31}-\d{1,9}(?:\.\d{1,9}){0,4}$/;

export function isSafeTaskId(id: string): boolean {
  return SAFE_ID.test(id);
}

export function isUnreadable(x: Task | UnreadableTask): x is UnreadableTask {
  return 'reason' in x;
}

class Unreadable extends Error {}

export function parseTaskFile(file: string, text: string): Task | UnreadableTask {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_TASK_FILE_BYTES) return { file, reason: tooLarge(size) };
  const span = findFrontmatter(text);
  if (!span)
    return { file, reason: 'no frontmatter: the file must start with a --- line, then YAML, then a closing --- line' };
  const yamlText = quoteHandles(text.slice(span.yamlStart, span.yamlEnd));
  let data: unknown;
  try {
    data = parseYaml(yamlText, { schema: 'core', prettyErrors: false });
  } catch (error) {
    const id = recoverId(yamlText);
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
    return { file, reason: `bad YAML in the frontmatter: ${message}`, ...(id ? { id } : {}) };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { file, reason: 'the frontmatter is not a YAML mapping of fields (id, title, status, ...)' };
  }
  const fields = data as Record<string, unknown>;
  const rawId = fields.id;
  if (rawId === undefined || rawId === null || rawId === '') return { file, reason: 'no id in the frontmatter' };
  if (typeof rawId !== 'string' || !isSafeTaskId(rawId)) {
    return {
      file,
      reason: `id ${JSON.stringify(String(rawId))} is not a safe task id (expected a prefix, a dash and a number, like TASK-12)`,
    };
  }
  const id = displayTaskId(rawId);
  try {
    const body = text.slice(span.bodyStart);
    const blockedNote = blockedOutsideNotes(body);
    return {
      id,
      title: optionalText(fields.title, 'title'),
      status: optionalText(fields.status, 'status').trim(),
      labels: stringList(fields.labels, 'labels'),
      dependencies: dependencyList(fields.dependencies),
      priority: priorityOf(fields.priority),
      ordinal: ordinalOf(fields.ordinal),
      assignee: assigneeOf(fields.assignee),
      description: section(body, 'SECTION:DESCRIPTION', 'Description'),
      acceptanceCriteria: criteriaOf(body),
      notes: section(body, 'SECTION:NOTES', 'Implementation Notes'),
      file,
      ...(blockedNote ? { blockedNote } : {}),
    };
  } catch (error) {
    if (error instanceof Unreadable) return { file, id, reason: error.message };
    throw error;
  }
}

export function tooLarge(size: number): string {
  return `the file is ${size} bytes, over the ${MAX_TASK_FILE_BYTES}-byte (1 MiB) limit for a task file`;
}

/** The id from a frontmatter YAML could not parse, when a safe one is there. */
function recoverId(yamlText: string): TaskId | undefined {
  const matches = [...yamlText.matchAll(/^id:[ \t]*['"]?([^'"\s]+)['"]?[ \t]*$/gm)];
  // Two id lines name no task for sure.
  return matches.length === 1 && isSafeTaskId(matches[0]![1]!) ? matches[0]![1] : undefined;
}

function optionalText(value: unknown, key: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Unreadable(`${key} must be text`);
}

/** A YAML list of text; anything but a list is ignored, as the CLI ignores a scalar `labels:` or `dependencies:`. */
function stringList(value: unknown, key: string): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((item) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean') return String(item);
    throw new Unreadable(`${key} must be a list of text values`);
  });
}

function dependencyList(value: unknown): TaskId[] {
  const dependencies = stringList(value, 'dependencies');
  for (const dependency of dependencies) {
    if (!isSafeTaskId(dependency))
      throw new Unreadable(`dependency ${JSON.stringify(dependency)} is not a task id (like TASK-12)`);
  }
  return dependencies;
}

/**
 * high, medium, low (any case and spacing); any other priority the CLI accepts (free text, configured ones) sorts as
 * none.
 */
function priorityOf(value: unknown): Priority | undefined {
  const priority = typeof value === 'string' ? value.trim().toLowerCase().replace(/\s+/g, ' ') : undefined;
  return priority === 'high' || priority === 'medium' || priority === 'low' ? priority : undefined;
}

/** A number, as the CLI's Number(); anything else (text, a list) is no ordinal. */
function ordinalOf(value: unknown): number | undefined {
  if (value === undefined || value === null || typeof value === 'boolean' || typeof value === 'object')
    return undefined;
  const number = Number(value);
  return Number.isFinite(number) && String(value).trim() !== '' ? number : undefined;
}

/** A single assignee counts as a list of one, as for the CLI. */
function assigneeOf(value: unknown): string[] {
  const list = typeof value === 'string' ? [value] : stringList(value, 'assignee');
  return list.filter((name) => name.trim() !== '');
}

/** An id as the CLI shows it: the prefix upper-cased (`task-3` is shown `TASK-3`). */
export function displayTaskId(id: string): string {
  const dash = id.indexOf('-');
  return dash > 0 ? id.slice(0, dash).toUpperCase() + id.slice(dash) : id;
}

/**
 * What the CLI does to the frontmatter before YAML sees it
 * (preprocessFrontmatter in src/markdown/parser.ts upstream): an unquoted
 * `@handle` in `assignee:` or `reporter:` (alone or in a flow list) is quoted,
 * since `@` cannot start a plain YAML value. Other lines are left alone.
 */
export function quoteHandles(yamlText: string): string {
  const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return yamlText
    .split(/\r?\n/)
    .map((line) => {
      const match = /^(\s*(?:assignee|reporter):\s*)(.*)$/.exec(line);
      if (!match) return line;
      const prefix = match[1]!;
      const value = match[2]!.trim();
      const flow = /^\[(.*)\]\s*(#.*)?$/.exec(value);
      if (flow) {
        const items = flow[1]!
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean)
          .map((entry) => (entry.startsWith('@') ? quote(entry) : entry));
        return `${prefix}[${items.join(', ')}]${flow[2] ? ` ${flow[2]}` : ''}`;
      }
      if (value && !/^['"[-]/.test(value)) return `${prefix}${quote(value)}`;
      return line;
    })
    .join('\n');
}

/**
 * A body section: between the CLI's `<!-- NAME:BEGIN -->` and `END` markers,
 * or, for files written by hand or by older versions, everything under the
 * `## Heading` up to the next `## ` heading.
 */
function section(body: string, marker: string, heading: string): string {
  const begin = markerLine(body, `<!-- ${marker}:BEGIN -->`);
  if (begin) {
    const end = markerLine(body, `<!-- ${marker}:END -->`, begin.end);
    if (!end) throw new Unreadable(`the <!-- ${marker}:BEGIN --> marker has no matching END marker`);
    return body.slice(begin.end, end.start).trim();
  }
  const headingMatch = new RegExp(`^## ${heading}[ \\t]*$`, 'm').exec(body);
  if (!headingMatch) return '';
  const rest = body.slice(headingMatch.index + headingMatch[0].length);
  const next = /^## /m.exec(rest);
  return (next ? rest.slice(0, next.index) : rest).trim();
}

/** A marker on a line of its own, from `from` on (a marker quoted inside text, `like <!-- AC:BEGIN -->`, is text). */
function markerLine(body: string, marker: string, from = 0): { start: number; end: number } | undefined {
  const pattern = new RegExp(`^[ \\t]*${marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \\t]*\\r?$`, 'gm');
  pattern.lastIndex = from;
  const match = pattern.exec(body);
  return match ? { start: match.index, end: match.index + match[0].length } : undefined;
}

/** The body without what lies between a `<!-- SECTION:X:BEGIN -->` marker and its END. */
function withoutMarkedSections(body: string): string {
  return body.replace(
    /^[ \t]*<!-- SECTION:([A-Z_]+):BEGIN -->[ \t]*\r?$[\s\S]*?^[ \t]*<!-- SECTION:\1:END -->[ \t]*\r?$/gm,
    '',
  );
}

/**
 * A criterion line as the CLI reads one: at the start of the line, `[ ]` or a lower-case `[x]` (an indented or `[X]`
 * line is text).
 */
const CRITERION = /^- \[([ x])\] (?:#(\d+) )?(.+?)[ \t]*\r?$/;

function criteriaOf(body: string): AcceptanceCriterion[] {
  // Only outside the marked sections, as for the CLI: a description may quote
  // an AC block or a heading (a queued prompt, a task about the format), which is its text.
  const unmarked = withoutMarkedSections(body);
  const begin = markerLine(unmarked, '<!-- AC:BEGIN -->');
  let block: string;
  if (begin) {
    const end = markerLine(unmarked, '<!-- AC:END -->', begin.end);
    if (!end) throw new Unreadable('the <!-- AC:BEGIN --> marker has no matching <!-- AC:END --> marker');
    block = unmarked.slice(begin.end, end.start);
  } else {
    const heading = /^## Acceptance Criteria[ \t]*$/m.exec(unmarked);
    if (!heading) return [];
    const rest = unmarked.slice(heading.index + heading[0].length);
    const next = /^## /m.exec(rest);
    block = next ? rest.slice(0, next.index) : rest;
  }
  const criteria: AcceptanceCriterion[] = [];
  for (const line of block.split('\n')) {
    const match = CRITERION.exec(line);
    if (!match) continue;
    criteria.push({
      index: match[2] ? Number(match[2]) : criteria.length + 1,
      text: match[3]!,
      checked: match[1] !== ' ',
    });
  }
  return criteria;
}

/**
 * The last `Blocked:` paragraph of the body outside the notes section (its own lines up to a blank line, a heading or a
 * marker).
 */
function blockedOutsideNotes(body: string): string | undefined {
  const begin = body.indexOf('<!-- SECTION:NOTES:BEGIN -->');
  const end = begin >= 0 ? body.indexOf('<!-- SECTION:NOTES:END -->', begin) : -1;
  const outside = begin >= 0 && end >= 0 ? body.slice(0, begin) + body.slice(end) : body;
  return lastBlockedParagraph(outside.split('\n'));
}

/**
 * Pure: from the last line starting `Blocked:` (any case) to the next blank line, heading or marker; the prefix
 * removed.
 */
export function lastBlockedParagraph(lines: readonly string[]): string | undefined {
  let from = -1;
  lines.forEach((line, index) => {
    if (/^\s*blocked:/i.test(line)) from = index;
  });
  if (from < 0) return undefined;
  const paragraph: string[] = [];
  for (let index = from; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, '').trimEnd();
    if (index > from && (!line.trim() || /^\s*(##|<!--|Parked:)/.test(line))) break;
    paragraph.push(index === from ? line.replace(/^\s*blocked:\s*/i, '') : line.trim());
  }
  const reason = paragraph.join('\n').trim();
  return reason || undefined;
}
