// Reads the task files (`<prefix>-*.md` in backlog/tasks, or wherever the
// board lives: location.ts) of a workspace into a Board, with the ids of the
// tasks in completed/. A bad task file never throws: it becomes an
// UnreadableTask. Only a workspace without a board is an error.
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
import { MAX_TASK_FILE_BYTES, isUnreadable, tooLarge } from './parse.js';
import { parseTaskFileRemembered } from './parse-memo.js';
import { canonicalTaskId, DEFAULT_TASK_PREFIX, isTaskFileName } from './task-id.js';
import { DEFAULT_STATUSES } from './status.js';
import {
  customDirectory,
  LOCATION_PROBES,
  locateBoard,
  noBoardMessage,
  ROOT_CONFIG_FILE,
  type BoardLocation,
} from './location.js';

/** The default layout (`backlog init`): what the demo writes. Boards elsewhere are found by locateBoard. */
export const TASKS_DIR = path.join('backlog', 'tasks');
export const CONFIG_FILE = path.join('backlog', 'config.yml');

/** Where the board of `workspace` lives on disk; a UsageError when there is none. */
export async function findBoardOnDisk(fs: FsPort, workspace: string): Promise<BoardLocation> {
  const rootConfig = await fs.readTextIfExists(path.join(workspace, ROOT_CONFIG_FILE)).catch(() => undefined);
  const custom = customDirectory(rootConfig);
  const probes = [...LOCATION_PROBES, ...(custom ? [custom] : [])];
  const stats = new Map(
    await Promise.all(probes.map(async (probe) => [probe, await fs.stat(path.join(workspace, probe))] as const)),
  );
  const location = locateBoard({
    rootConfig,
    isDir: (relative) => stats.get(relative)?.isDirectory === true,
    isFile: (relative) => stats.get(relative)?.isDirectory === false,
  });
  if (!location) throw new UsageError(noBoardMessage(workspace));
  return location;
}

export async function readBoard(fs: FsPort, workspace: string): Promise<Board> {
  const location = await findBoardOnDisk(fs, workspace);
  const configText = location.configFile
    ? await fs.readTextIfExists(path.join(workspace, location.configFile))
    : undefined;
  const prefix = taskPrefixFrom(configText);
  const tasksIn = async (dir: string) =>
    (await fs.list(path.join(workspace, dir)))
      .filter((name) => isTaskFileName(name, prefix))
      .sort()
      .map((name) => path.join(dir, name));
  const parsed = await Promise.all((await tasksIn(location.tasksDir)).map((file) => readTaskFile(fs, workspace, file)));
  const completed = await Promise.all(
    (await tasksIn(location.completedDir)).map((file) => readTaskFile(fs, workspace, file)),
  );
  return assembleBoard(parsed, configText, completedIds(completed));
}

/** The ids of the readable files in completed/. */
export function completedIds(parsed: readonly (Task | UnreadableTask)[]): TaskId[] {
  return parsed.filter((entry): entry is Task => !isUnreadable(entry)).map((task) => task.id);
}

/** Pure: the board from parsed task files (duplicates made unreadable), the config's text and the completed ids. */
export function assembleBoard(
  parsed: readonly (Task | UnreadableTask)[],
  configText: string | undefined,
  completed: readonly TaskId[] = [],
): Board {
  return {
    ...separateDuplicates(parsed),
    statuses: statusesFrom(configText),
    ...(completed.length ? { completed } : {}),
  };
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
    return parseTaskFileRemembered(file, await fs.readText(full));
  } catch (error) {
    return { file, reason: `cannot read the file: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function separateDuplicates(parsed: readonly (Task | UnreadableTask)[]): {
  tasks: Task[];
  unreadable: UnreadableTask[];
} {
  const filesById = new Map<string, string[]>();
  for (const entry of parsed) {
    if (isUnreadable(entry)) continue;
    const key = canonicalTaskId(entry.id);
    filesById.set(key, [...(filesById.get(key) ?? []), entry.file]);
  }
  const tasks: Task[] = [];
  const unreadable: UnreadableTask[] = [];
  for (const entry of parsed) {
    if (isUnreadable(entry)) {
      unreadable.push(entry);
      continue;
    }
    const others = (filesById.get(canonicalTaskId(entry.id)) ?? []).filter((file) => file !== entry.file);
    if (others.length)
      unreadable.push({
        file: entry.file,
        id: entry.id,
        reason: `duplicate id ${entry.id} also in ${others.join(', ')}`,
      });
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
  const statuses = configValue(configText, 'statuses');
  if (Array.isArray(statuses) && statuses.length && statuses.every((status) => typeof status === 'string'))
    return statuses as string[];
  return DEFAULT_STATUSES;
}

/** The task prefix of the config (`task_prefix`, default `task`): task files are `<prefix>-*.md`. */
export function taskPrefixFrom(configText: string | undefined): string {
  const prefix = configValue(configText, 'task_prefix');
  return typeof prefix === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(prefix.trim())
    ? prefix.trim()
    : DEFAULT_TASK_PREFIX;
}

/** The last config text parsed and its top-level mapping: a drain reads the same config many times. */
let lastConfig: { readonly text: string; readonly config: unknown } | undefined;

function configValue(configText: string | undefined, key: string): unknown {
  if (configText === undefined) return undefined;
  if (lastConfig?.text !== configText) {
    let config: unknown;
    try {
      config = parseYaml(configText, { schema: 'core' });
    } catch {
      config = undefined;
    }
    lastConfig = { text: configText, config };
  }
  const { config } = lastConfig;
  return config !== null && typeof config === 'object' ? (config as Record<string, unknown>)[key] : undefined;
}

/** The task with this id; case-insensitive, as the CLI accepts task-1 for TASK-1. */
export function findTask(board: Board, id: TaskId): Task | undefined {
  const wanted = canonicalTaskId(id);
  return board.tasks.find((task) => canonicalTaskId(task.id) === wanted);
}
