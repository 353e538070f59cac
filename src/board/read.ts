// Reads backlog/tasks/*.md of a workspace into a Board. A bad task file never
// throws: it becomes an UnreadableTask. Only a workspace without backlog/ is
// an error, because then there is no board at all.
//
// Duplicate ids: every file that claims an id some other file also claims is
// unreadable ("duplicate id TASK-3 also in <file>"). Keeping the first would
// silently pick one of two tasks by file-name order; refusing both makes the
// operator decide.
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { FsPort } from '../ports.js';
import type { Board, Task, TaskId, UnreadableTask } from '../types.js';
import { UsageError } from '../errors.js';
import { MAX_TASK_FILE_BYTES, isUnreadable, parseTaskFile, tooLarge } from './parse.js';

/** Backlog.md's statuses when backlog/config.yml does not name any. */
export const DEFAULT_STATUSES: readonly string[] = ['To Do', 'In Progress', 'Done'];

export const TASKS_DIR = path.join('backlog', 'tasks');
export const CONFIG_FILE = path.join('backlog', 'config.yml');

export async function readBoard(fs: FsPort, workspace: string): Promise<Board> {
  const backlogDir = path.join(workspace, 'backlog');
  const stat = await fs.stat(backlogDir);
  if (!stat?.isDirectory) throw new UsageError(`${workspace} has no backlog/ directory; run \`backlog init\` there`);
  const names = (await fs.list(path.join(workspace, TASKS_DIR))).filter((name) => name.endsWith('.md') && !name.startsWith('.')).sort();
  const parsed = await Promise.all(names.map((name) => readTaskFile(fs, workspace, path.join(TASKS_DIR, name))));
  return assembleBoard(parsed, await fs.readTextIfExists(path.join(workspace, CONFIG_FILE)));
}

/** Pure: the board from parsed task files (duplicates made unreadable) and the config's text. */
export function assembleBoard(parsed: readonly (Task | UnreadableTask)[], configText: string | undefined): Board {
  return { ...separateDuplicates(parsed), statuses: statusesFrom(configText) };
}

/** One task file; `file` is relative to the workspace. Never throws for the file's content. */
async function readTaskFile(fs: FsPort, workspace: string, file: string): Promise<Task | UnreadableTask> {
  const full = path.join(workspace, file);
  try {
    // The size check comes before the read, so a huge file is never loaded.
    const stat = await fs.stat(full);
    if (!stat) return { file, reason: 'the file disappeared while the board was read' };
    if (stat.isDirectory) return { file, reason: 'a directory, not a task file' };
    // A FIFO or a device (say, a link to /dev/zero) has no meaningful size
    // and could block or never end: only regular files are read. (A fake
    // FsPort that reports permission bits only has no type bits: let it be.)
    const type = stat.mode & 0o170000;
    if (type !== 0 && type !== 0o100000) return { file, reason: 'not a regular file' };
    if (stat.size > MAX_TASK_FILE_BYTES) return { file, reason: tooLarge(stat.size) };
    return parseTaskFile(file, await fs.readText(full));
  } catch (error) {
    return { file, reason: `cannot read the file: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function separateDuplicates(parsed: readonly (Task | UnreadableTask)[]): { tasks: Task[]; unreadable: UnreadableTask[] } {
  const filesById = new Map<string, string[]>();
  for (const entry of parsed) {
    if (isUnreadable(entry)) continue;
    const key = entry.id.toUpperCase();
    filesById.set(key, [...(filesById.get(key) ?? []), entry.file]);
  }
  const tasks: Task[] = [];
  const unreadable: UnreadableTask[] = [];
  for (const entry of parsed) {
    if (isUnreadable(entry)) {
      unreadable.push(entry);
      continue;
    }
    const others = (filesById.get(entry.id.toUpperCase()) ?? []).filter((file) => file !== entry.file);
    if (others.length) unreadable.push({ file: entry.file, id: entry.id, reason: `duplicate id ${entry.id} also in ${others.join(', ')}` });
    else tasks.push(entry);
  }
  return { tasks, unreadable };
}

/**
 * The `statuses:` list of backlog/config.yml. A missing, unparsable or
 * malformed config falls back to Backlog.md's defaults: the statuses only
 * inform, the readiness rules name "To Do" and "Done" themselves.
 */
export function statusesFrom(configText: string | undefined): readonly string[] {
  if (configText === undefined) return DEFAULT_STATUSES;
  try {
    const config: unknown = parseYaml(configText, { schema: 'core' });
    const statuses = (config as { statuses?: unknown } | null)?.statuses;
    if (Array.isArray(statuses) && statuses.length && statuses.every((status) => typeof status === 'string')) return statuses as string[];
  } catch {
    // fall through to the defaults
  }
  return DEFAULT_STATUSES;
}

/** The task with this id; case-insensitive, as the CLI accepts task-1 for TASK-1. */
export function findTask(board: Board, id: TaskId): Task | undefined {
  const wanted = id.toUpperCase();
  return board.tasks.find((task) => task.id.toUpperCase() === wanted);
}
