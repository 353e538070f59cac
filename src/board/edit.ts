// Pure text edits of a task file (and of backlog/config.yml) that change only
// the bytes they must, in the layout the Backlog.md CLI writes itself: a
// diff of our edit against the CLI's own edit of the same file is empty.
// Every edit re-parses its result and throws if the field does not read back
// as intended, so an odd hand-written layout fails loudly instead of being
// corrupted.
import { parse as parseYaml } from 'yaml';
import { UsageError, configValueError } from '../errors.js';
import { findEntry, findFrontmatter, newlineOf, type EntrySpan, type FrontmatterSpan } from './frontmatter.js';
import { yamlScalar } from './yaml-scalar.js';
import { BLOCKED_STATUS } from './readiness.js';

const NOTES_BEGIN = '<!-- SECTION:NOTES:BEGIN -->';
const NOTES_END = '<!-- SECTION:NOTES:END -->';
const AC_BEGIN = '<!-- AC:BEGIN -->';
const AC_END = '<!-- AC:END -->';
/** Sections the CLI places after Implementation Notes; a new notes section goes before them. */
const AFTER_NOTES = /^## (?:Comments|Final Summary)[ \t]*\r?$/m;

export function setStatus(text: string, status: string): string {
  const result = setScalar(text, 'status', status, 'title');
  expectField(result, 'status', status);
  return result;
}

/**
 * Sets `updated_date`, which the CLI rewrites on every edit (inserted after
 * `created_date` when absent). `date` is in the CLI's format: see backlogTimestamp.
 */
export function setUpdatedDate(text: string, date: string): string {
  const result = setScalar(text, 'updated_date', date, 'created_date');
  expectField(result, 'updated_date', date);
  return result;
}

/** The CLI's date format, 'YYYY-MM-DD HH:mm', in UTC. */
export function backlogTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 16).replace('T', ' ');
}

export function addLabel(text: string, label: string): string {
  const span = requireFrontmatter(text);
  const current = labelsOf(text, span);
  if (current.includes(label)) return text;
  const nl = newlineOf(text);
  const entry = findEntry(text, span, 'labels');
  let result: string;
  if (!entry) {
    const anchor = findEntry(text, span, 'dependencies');
    const at = anchor ? anchor.start : span.yamlEnd;
    result = text.slice(0, at) + blockList('labels', [label], nl) + text.slice(at);
  } else {
    const style = entryStyle(text, entry);
    if (current.length === 0 || style === 'scalar') {
      result = replaceEntry(text, entry, blockList('labels', [...current, label], nl));
    } else if (style === 'flow') {
      const close = text.lastIndexOf(']', entry.contentEnd);
      result = `${text.slice(0, close).replace(/[ \t]*$/, '')}, ${yamlScalar(label)}${text.slice(close)}`;
    } else {
      const indent = /\n([ \t]*)- /.exec(text.slice(entry.start, entry.contentEnd))?.[1] ?? '  ';
      result = text.slice(0, entry.contentEnd) + `${indent}- ${yamlScalar(label)}${nl}` + text.slice(entry.contentEnd);
    }
  }
  expectLabels(result, [...current, label]);
  return result;
}

export function removeLabel(text: string, label: string): string {
  const span = requireFrontmatter(text);
  const current = labelsOf(text, span);
  if (!current.includes(label)) return text;
  const remaining = current.filter((existing) => existing !== label);
  const nl = newlineOf(text);
  const entry = findEntry(text, span, 'labels')!;
  const style = entryStyle(text, entry);
  let result: string;
  if (remaining.length === 0) {
    result = replaceEntry(text, entry, `labels: []${nl}`);
  } else if (style === 'flow') {
    result = replaceEntry(text, entry, `labels: [${remaining.map(yamlScalar).join(', ')}]${nl}`);
  } else if (style === 'scalar') {
    result = replaceEntry(text, entry, blockList('labels', remaining, nl));
  } else {
    const lines = text.slice(entry.start, entry.contentEnd).split(/(?<=\n)/);
    const kept = lines.filter((line, index) => index === 0 || !isItemFor(line, label));
    result = text.slice(0, entry.start) + kept.join('') + text.slice(entry.contentEnd);
  }
  expectLabels(result, remaining);
  return result;
}

/**
 * Text placed inside a section is data: it must not be able to close the
 * section or open another (`<!-- SECTION:...:END -->`, `<!-- AC:BEGIN -->`),
 * so every `<!--` is written `<! --`.
 */
export function asSectionText(text: string): string {
  return text.replace(/<!--/g, '<! --');
}

/**
 * Appends a note to the Implementation Notes section, separated from earlier
 * notes by a blank line (as `backlog task edit --append-notes` does), creating
 * the section where the CLI would when the task has none.
 */
export function appendNote(text: string, note: string): string {
  const span = requireFrontmatter(text);
  const nl = newlineOf(text);
  const clean = asSectionText(note).replace(/\r?\n/g, nl).replace(/\s+$/, '');
  if (!clean) return text;
  const begin = text.indexOf(NOTES_BEGIN, span.bodyStart);
  if (begin >= 0) {
    const innerStart = begin + NOTES_BEGIN.length;
    const end = text.indexOf(NOTES_END, innerStart);
    if (end < 0) throw new Error(`the ${NOTES_BEGIN} marker has no matching END marker`);
    const existingEnd = lastContentEnd(text, innerStart, end);
    if (existingEnd === innerStart) return text.slice(0, innerStart) + nl + clean + nl + text.slice(end);
    return text.slice(0, existingEnd) + nl + nl + clean + text.slice(existingEnd);
  }
  const section = `## Implementation Notes${nl}${nl}${NOTES_BEGIN}${nl}${clean}${nl}${NOTES_END}${nl}`;
  const later = AFTER_NOTES.exec(text.slice(span.bodyStart));
  const at = later ? span.bodyStart + later.index : text.length;
  const contentEnd = lastContentEnd(text, span.bodyStart, at);
  const before =
    contentEnd === span.bodyStart ? text.slice(0, span.bodyStart) + nl : text.slice(0, contentEnd) + nl + nl;
  return before + section + (later ? nl + text.slice(at) : '');
}

/** Checks acceptance criterion #index (1-based, as `--check-ac`). Unchanged when already checked. */
export function checkCriterion(text: string, index: number): string {
  const span = requireFrontmatter(text);
  const begin = text.indexOf(AC_BEGIN, span.bodyStart);
  const end = begin < 0 ? -1 : text.indexOf(AC_END, begin);
  if (begin < 0 || end < 0)
    throw new Error(`no acceptance criteria section (${AC_BEGIN} ... ${AC_END}) to check #${index} in`);
  let offset = begin;
  let position = 0;
  for (const line of text.slice(begin, end).split(/(?<=\n)/)) {
    const match = /^([ \t]*- \[)([ xX])\] (?:#(\d+) )?/.exec(line);
    if (match) {
      position += 1;
      if ((match[3] ? Number(match[3]) : position) === index) {
        if (match[2] !== ' ') return text;
        const box = offset + match[1]!.length;
        return `${text.slice(0, box)}x${text.slice(box + 1)}`;
      }
    }
    offset += line.length;
  }
  throw new Error(`no acceptance criterion #${index}`);
}

/**
 * Adds "Blocked" to the `statuses:` list of backlog/config.yml (the CLI
 * refuses `-s Blocked` until then). It goes before "Done": Backlog.md treats
 * the last status as the finished one, so a Blocked at the end would count as
 * done and unblock its dependents; a Blocked already last is moved before the
 * status before it. Unchanged when Blocked is already there and not last.
 */
export function ensureBlockedStatus(configYmlText: string, file = 'backlog/config.yml'): string {
  let config: unknown;
  try {
    config = parseYaml(configYmlText, { schema: 'core' });
  } catch (error) {
    const problem = `not valid YAML (${(error instanceof Error ? error.message : String(error)).split('\n')[0]})`;
    throw new UsageError(configValueError(file, 'statuses', problem, 'fix the file, then add "Blocked" to statuses'));
  }
  const statuses = (config as { statuses?: unknown } | null)?.statuses;
  if (statuses !== undefined && !(Array.isArray(statuses) && statuses.every((status) => typeof status === 'string'))) {
    throw new UsageError(
      configValueError(
        file,
        'statuses',
        'is not a list of status names',
        'write it as statuses: ["To Do", "In Progress", "Blocked", "Done"]',
      ),
    );
  }
  const list = [...((statuses as string[] | undefined) ?? ['To Do', 'In Progress', 'Done'])];
  const blockedAt = list.findIndex((status) => status.trim().toLowerCase() === 'blocked');
  // Blocked as the last status would be the finished one: moved before the status before it.
  const misplaced = blockedAt >= 0 && blockedAt === list.length - 1 && list.length > 1;
  if (blockedAt >= 0 && !misplaced) return configYmlText;
  if (misplaced) list.splice(blockedAt, 1);
  const doneIndex = misplaced ? -1 : list.findIndex((status) => status.trim().toLowerCase() === 'done');
  const at = doneIndex >= 0 ? doneIndex : Math.max(0, list.length - 1);
  const wanted = [...list.slice(0, at), BLOCKED_STATUS, ...list.slice(at)];
  const nl = newlineOf(configYmlText);
  const whole: FrontmatterSpan = { yamlStart: 0, yamlEnd: configYmlText.length, bodyStart: configYmlText.length };
  const entry = findEntry(configYmlText, whole, 'statuses');
  const flow = `statuses: [${wanted.map((status) => JSON.stringify(status)).join(', ')}]${nl}`;
  let result: string;
  if (!entry) {
    const separator = configYmlText === '' || configYmlText.endsWith('\n') ? '' : nl;
    result = configYmlText + separator + flow;
  } else if (entryStyle(configYmlText, entry) !== 'block' || list.length === 0 || misplaced) {
    result = replaceEntry(configYmlText, entry, flow);
  } else {
    const lines = configYmlText.slice(entry.start, entry.contentEnd).split(/(?<=\n)/);
    const items = lines
      .map((line, index) => ({ line, index }))
      .filter(({ line, index }) => index > 0 && /^[ \t]*- /.test(line));
    const target = items[doneIndex >= 0 ? doneIndex : items.length - 1]!;
    const indent = /^([ \t]*)- /.exec(target.line)![1]!;
    lines.splice(target.index, 0, `${indent}- Blocked${nl}`);
    result = configYmlText.slice(0, entry.start) + lines.join('') + configYmlText.slice(entry.contentEnd);
  }
  const check = (parseYaml(result, { schema: 'core' }) as { statuses?: unknown } | null)?.statuses;
  if (JSON.stringify(check) !== JSON.stringify(wanted)) {
    throw new UsageError(
      configValueError(
        file,
        'statuses',
        'could not add "Blocked" to its layout',
        'add "Blocked" before "Done" by hand',
      ),
    );
  }
  return result;
}

// ---------------------------------------------------------------- helpers

function requireFrontmatter(text: string): FrontmatterSpan {
  const span = findFrontmatter(text);
  if (!span) throw new Error('the task file has no frontmatter (--- ... ---) to edit');
  return span;
}

function frontmatterData(text: string): Record<string, unknown> {
  const span = requireFrontmatter(text);
  const data: unknown = parseYaml(text.slice(span.yamlStart, span.yamlEnd), { schema: 'core' });
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new Error('the frontmatter is not a YAML mapping');
  return data as Record<string, unknown>;
}

function labelsOf(text: string, span: FrontmatterSpan): string[] {
  const data = frontmatterData(text.slice(0, span.bodyStart));
  const labels = data.labels;
  if (labels === undefined || labels === null) return [];
  const list = Array.isArray(labels) ? labels : [labels];
  return list.map((label) => String(label));
}

function setScalar(text: string, key: string, value: string, after: string): string {
  const span = requireFrontmatter(text);
  const nl = newlineOf(text);
  const line = `${key}: ${yamlScalar(value)}${nl}`;
  const entry = findEntry(text, span, key);
  if (entry) return replaceEntry(text, entry, line);
  const anchor = findEntry(text, span, after);
  const at = anchor ? anchor.contentEnd : span.yamlEnd;
  return text.slice(0, at) + line + text.slice(at);
}

/** Replaces an entry's content lines, keeping blank and comment lines that trail it. */
function replaceEntry(text: string, entry: EntrySpan, replacement: string): string {
  return text.slice(0, entry.start) + replacement + text.slice(entry.contentEnd);
}

function blockList(key: string, items: readonly string[], nl: string): string {
  return `${key}:${nl}${items.map((item) => `  - ${yamlScalar(item)}${nl}`).join('')}`;
}

function entryStyle(text: string, entry: EntrySpan): 'flow' | 'block' | 'scalar' {
  const firstLine = text.slice(entry.start, entry.contentEnd).split('\n')[0]!;
  const value = firstLine
    .slice(firstLine.indexOf(':') + 1)
    .replace(/\s+#.*$/, '')
    .trim();
  if (value.startsWith('[')) return 'flow';
  return value === '' ? 'block' : 'scalar';
}

function isItemFor(line: string, label: string): boolean {
  const match = /^[ \t]*- (.*?)\r?\n?$/.exec(line);
  if (!match) return false;
  try {
    return String(parseYaml(match[1]!, { schema: 'core' })) === label;
  } catch {
    return false;
  }
}

function lastContentEnd(text: string, from: number, to: number): number {
  let end = to;
  while (end > from && /\s/.test(text[end - 1]!)) end -= 1;
  return end;
}

function expectField(text: string, key: string, value: string): void {
  const actual = frontmatterData(text)[key];
  if (actual !== value)
    throw new Error(
      `could not set ${key} to ${JSON.stringify(value)}: the frontmatter reads back ${JSON.stringify(actual)}`,
    );
}

function expectLabels(text: string, labels: readonly string[]): void {
  const actual = labelsOf(text, requireFrontmatter(text));
  if (JSON.stringify(actual) !== JSON.stringify(labels)) {
    throw new Error(
      `could not edit the labels: they read back as ${JSON.stringify(actual)} instead of ${JSON.stringify(labels)}`,
    );
  }
}
