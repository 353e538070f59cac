// Where a repo's board lives, decided as the Backlog.md CLI decides it
// (src/utils/backlog-directory.ts upstream): a root `backlog.config.yml` with
// a project name names the folder (`backlog_directory`, default the built-in
// search); otherwise `backlog/` holding a config, then `.backlog/` holding
// one, then either folder without a config. The folder's config is
// `config.yml`, else `config.yaml`. Pure: the caller gathers the facts (from
// the disk, or from a git tree), this decides. placeBoard also judges what
// stands there: a board is a folder of files, and anything else where the
// CLI would look for it (a file, a link, a FIFO, a device, a submodule) is
// an error naming the path, never a folder we skip or follow.
import * as path from 'node:path';

export interface BoardLocation {
  /** The board folder relative to the workspace: `backlog`, `.backlog` or a custom one. */
  readonly dir: string;
  /** The config file relative to the workspace, or undefined when there is none. */
  readonly configFile: string | undefined;
  /** backlog/tasks (or the folder's tasks/). */
  readonly tasksDir: string;
  /** backlog/completed: tasks `backlog task complete` moved there. */
  readonly completedDir: string;
}

export const ROOT_CONFIG_FILE = 'backlog.config.yml';
export const BUILT_IN_DIRS = ['backlog', '.backlog'] as const;
export const FOLDER_CONFIGS = ['config.yml', 'config.yaml'] as const;

/** The paths whose existence decides the location before any custom folder is known. */
export const LOCATION_PROBES: readonly string[] = [
  ...BUILT_IN_DIRS,
  ...BUILT_IN_DIRS.flatMap((dir) => FOLDER_CONFIGS.map((name) => path.posix.join(dir, name))),
];

export interface LocationFacts {
  /** The text of backlog.config.yml at the root, when there is one. */
  readonly rootConfig: string | undefined;
  isDir(relative: string): boolean;
  isFile(relative: string): boolean;
}

function at(dir: string, configFile: string | undefined): BoardLocation {
  return { dir, configFile, tasksDir: path.posix.join(dir, 'tasks'), completedDir: path.posix.join(dir, 'completed') };
}

/**
 * `backlog_directory` (or `backlogDirectory`) of a root config that has a project name; null when it names none;
 * undefined when the CLI ignores the file.
 */
export function rootConfigDirectory(text: string): string | null | undefined {
  let project = false;
  let directory: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line
      .slice(colon + 1)
      .trim()
      .replace(/^['"]|['"]$/g, '');
    if ((key === 'project_name' || key === 'projectName') && value) project = true;
    if (key === 'backlog_directory' || key === 'backlogDirectory') directory = normalizeDirectory(value);
  }
  return project ? directory : undefined;
}

/** A relative folder inside the project, as the CLI accepts it; null for absolute, empty or escaping ones. */
function normalizeDirectory(value: string): string | null {
  const trimmed = value.trim();
  if (!trimmed || /^(?:[a-zA-Z]:)?[\\/]/.test(trimmed)) return null;
  const normal = path.posix.normalize(trimmed.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (!normal || normal === '.' || normal === '..' || normal.startsWith('../')) return null;
  return normal;
}

function folderConfig(facts: LocationFacts, dir: string): string | undefined {
  return FOLDER_CONFIGS.map((name) => path.posix.join(dir, name)).find((file) => facts.isFile(file));
}

function builtIn(facts: LocationFacts): string | undefined {
  return (
    BUILT_IN_DIRS.find((dir) => facts.isDir(dir) && folderConfig(facts, dir)) ??
    BUILT_IN_DIRS.find((dir) => facts.isDir(dir))
  );
}

/** The board's location, or undefined when the workspace has no board. */
export function locateBoard(facts: LocationFacts): BoardLocation | undefined {
  const directory = facts.rootConfig === undefined ? undefined : rootConfigDirectory(facts.rootConfig);
  if (directory !== undefined) {
    // The root config is the board's config; its folder is named or searched.
    const dir = directory ?? builtIn(facts);
    return dir && facts.isDir(dir) ? at(dir, ROOT_CONFIG_FILE) : undefined;
  }
  const dir = builtIn(facts);
  return dir ? at(dir, folderConfig(facts, dir)) : undefined;
}

/** The custom folder a root config names, which the caller must probe too. */
export function customDirectory(rootConfig: string | undefined): string | undefined {
  return rootConfig === undefined ? undefined : (rootConfigDirectory(rootConfig) ?? undefined);
}

/** What stands at a path, a link never followed; the disk reader and the git reader each tell theirs. */
export type PathShape =
  | 'folder'
  | 'file'
  | 'link'
  | 'fifo'
  | 'device'
  | 'socket'
  | 'submodule'
  /** Something on the way there is not a folder (a file, or a link that is not followed). */
  | 'below-non-folder';

export interface ShapeFacts {
  /** The text of backlog.config.yml at the root, when there is one. */
  readonly rootConfig: string | undefined;
  /**
   * What is at `relative` (the built-in folders, their config files and tasks/ and completed/, and a custom folder
   * with its own); undefined when nothing is, or when it was not looked at.
   */
  shapeOf(relative: string): PathShape | undefined;
}

export type BoardRole = 'board' | 'tasks' | 'completed';

export type BoardPlace =
  | { readonly kind: 'found'; readonly location: BoardLocation }
  | { readonly kind: 'none' }
  /** Where the board (or its tasks/ or completed/) should be, something that is not a folder stands. */
  | { readonly kind: 'misshapen'; readonly path: string; readonly shape: PathShape; readonly role: BoardRole };

/**
 * Where the board is, judged by what stands there. The location is decided
 * with real folders only; the CLI, which follows links and stats what it
 * finds, would take whatever exists at a board path, so when that differs
 * from a real folder (a file or a link at backlog/, say) the path is named as
 * misshapen rather than skipped. tasks/ and completed/ must each be a folder
 * or absent.
 */
export function placeBoard(facts: ShapeFacts): BoardPlace {
  const shape = (relative: string) => facts.shapeOf(relative);
  const isFolder = (relative: string) => shape(relative) === 'folder';
  // A config that is not a regular file is reported when it is read (bounded, regular files only).
  const isFile = (relative: string) => shape(relative) !== undefined && !isFolder(relative);
  const underLink = (relative: string) => relative.includes('/') && shape(path.posix.dirname(relative)) === 'link';
  const location = locateBoard({ rootConfig: facts.rootConfig, isDir: isFolder, isFile });
  const taken = locateBoard({
    rootConfig: facts.rootConfig,
    isDir: (relative) => shape(relative) !== undefined,
    // What is below a link is not looked at: it may hold a config, so the CLI may prefer it.
    isFile: (relative) => isFile(relative) || underLink(relative),
  });
  const misshapen = (relative: string, role: BoardRole): BoardPlace | undefined => {
    const found = shape(relative);
    return found === undefined || found === 'folder'
      ? undefined
      : { kind: 'misshapen', path: relative, shape: found, role };
  };
  if (taken && taken.dir !== location?.dir) return misshapen(taken.dir, 'board') ?? { kind: 'none' };
  if (!location) return { kind: 'none' };
  return (
    misshapen(location.tasksDir, 'tasks') ??
    misshapen(location.completedDir, 'completed') ?? { kind: 'found', location }
  );
}

const SHAPE_WORDS: Readonly<Record<Exclude<PathShape, 'folder'>, string>> = {
  file: 'is a file, not a folder',
  link: 'is a symbolic link (a board is never read through a link)',
  fifo: 'is a FIFO (named pipe), not a folder',
  device: 'is a device, not a folder',
  socket: 'is a socket, not a folder',
  submodule: 'is a submodule (a gitlink), not a folder',
  'below-non-folder': 'is not a folder: a file or a link stands on the way to it',
};

/** What is wrong with a misshapen board path and how to fix it, for the disk (`inGit` false) or a commit. */
export function misshapenProblem(
  place: Extract<BoardPlace, { kind: 'misshapen' }>,
  inGit: boolean,
): { readonly problem: string; readonly fix: string } {
  const problem = place.shape === 'folder' ? 'is not a folder' : SHAPE_WORDS[place.shape];
  const replace = inGit ? `commit the folder itself at ${place.path} in its place` : `put the folder itself there`;
  const fix =
    place.role === 'board'
      ? `the board must be a folder of task files: ${replace} (move what is there away; \`backlog init\` makes a new board, git can restore the old one)`
      : `${place.role === 'tasks' ? 'task files' : 'completed tasks'} go in the folder ${place.path}: ${replace} (move what is there away, make the folder and move the task files into it)`;
  return { problem, fix };
}

/** What to tell an operator whose workspace has no board. */
export function noBoardMessage(workspace: string): string {
  return `workspace ${workspace} has no Backlog.md board (no backlog/ or .backlog/ directory, and no backlog.config.yml naming one); run \`backlog init\` there`;
}
