// Where a repo's board lives, decided as the Backlog.md CLI decides it
// (src/utils/backlog-directory.ts upstream): a root `backlog.config.yml` with
// a project name names the folder (`backlog_directory`, default the built-in
// search); otherwise `backlog/` holding a config, then `.backlog/` holding
// one, then either folder without a config. The folder's config is
// `config.yml`, else `config.yaml`. Pure: the caller gathers the facts (from
// the disk, or from a git tree), this decides.
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
const FOLDER_CONFIGS = ['config.yml', 'config.yaml'] as const;

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

/** What to tell an operator whose workspace has no board. */
export function noBoardMessage(workspace: string): string {
  return `workspace ${workspace} has no Backlog.md board (no backlog/ or .backlog/ directory, and no backlog.config.yml naming one); run \`backlog init\` there`;
}
