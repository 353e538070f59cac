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
import type { FsPort, UntrustedStat } from '../ports.js';
import type { Board, Task, TaskId, UnreadableTask } from '../types.js';
import { PathError, UntrustedPathError, UsageError } from '../errors.js';
import { MAX_TASK_FILE_BYTES, isUnreadable, tooLarge } from './parse.js';
import { parseTaskFileRemembered } from './parse-memo.js';
import { canonicalTaskId, DEFAULT_TASK_PREFIX, isTaskFileName } from './task-id.js';
import { DEFAULT_STATUSES } from './status.js';
import {
  BUILT_IN_DIRS,
  customDirectory,
  FOLDER_CONFIGS,
  misshapenProblem,
  noBoardMessage,
  placeBoard,
  ROOT_CONFIG_FILE,
  type BoardLocation,
  type PathShape,
} from './location.js';

/** The default layout (`backlog init`): what the demo writes. Boards elsewhere are found by placeBoard. */
export const TASKS_DIR = path.join('backlog', 'tasks');
export const CONFIG_FILE = path.join('backlog', 'config.yml');

/** Where the board of `workspace` lives on disk; a UsageError when there is none, a PathError when it is no folder. */
export async function findBoardOnDisk(fs: FsPort, workspace: string): Promise<BoardLocation> {
  const rootConfig = await fs.readTextIfExists(path.join(workspace, ROOT_CONFIG_FILE)).catch(() => undefined);
  const shapes = await shapesOnDisk(fs, workspace, customDirectory(rootConfig));
  const place = placeBoard({ rootConfig, shapeOf: (relative) => shapes.get(relative) });
  if (place.kind === 'none') throw new UsageError(noBoardMessage(workspace));
  if (place.kind === 'misshapen') {
    const { problem, fix } = misshapenProblem(place, false);
    throw new PathError(path.join(workspace, place.path), problem, fix);
  }
  return place.location;
}

/**
 * What stands at each board folder (built-in and custom) and, inside those that are folders, at their config files,
 * tasks/ and completed/: lstat through the no-follow walk, so a link is seen as a link.
 */
async function shapesOnDisk(
  fs: FsPort,
  workspace: string,
  custom: string | undefined,
): Promise<Map<string, PathShape>> {
  const shapes = new Map<string, PathShape>();
  const look = async (relative: string) => {
    const shape = await shapeOnDisk(fs, workspace, relative);
    if (shape) shapes.set(relative, shape);
  };
  const dirs = [
    ...BUILT_IN_DIRS,
    ...(custom && !(BUILT_IN_DIRS as readonly string[]).includes(custom) ? [custom] : []),
  ];
  await Promise.all(dirs.map(look));
  const inside = dirs
    .filter((dir) => shapes.get(dir) === 'folder')
    .flatMap((dir) => [...FOLDER_CONFIGS, 'tasks', 'completed'].map((name) => path.posix.join(dir, name)));
  await Promise.all(inside.map(look));
  return shapes;
}

async function shapeOnDisk(fs: FsPort, workspace: string, relative: string): Promise<PathShape | undefined> {
  let stat: UntrustedStat | undefined;
  try {
    stat = await fs.statUntrusted(workspace, relative);
  } catch (error) {
    // A component on the way is a file or a link (a custom folder below one, say).
    if (error instanceof UntrustedPathError) return 'below-non-folder';
    if ((error as NodeJS.ErrnoException).code === 'EACCES')
      throw new PathError(
        path.join(workspace, relative),
        'cannot be looked at (permission denied)',
        'give read and search permission on every directory above it',
      );
    throw error;
  }
  if (!stat) return undefined;
  if (stat.isSymlink) return 'link';
  if (stat.isDirectory) return 'folder';
  if (stat.isFile) return 'file';
  const type = stat.mode & 0o170000;
  if (type === 0o010000) return 'fifo';
  if (type === 0o140000) return 'socket';
  return type === 0o020000 || type === 0o060000 ? 'device' : 'file';
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
