// The board as root sees it: read from git objects as data, never a checkout,
// never a hook, never a write into the repo. One `git cat-file --batch-check`
// per tick resolves, on the staging and base branches, where the board lives
// (backlog/, .backlog/ or the folder backlog.config.yml names: board/location)
// and the tree ids of its tasks/ and completed/ folders; when they are
// unchanged the last answer is reused, and when they change only blobs not
// seen before are read. Git runs with safe.directory=<repo> because root does
// not own the checkout. `agent-runner next` reads the same view, so it and
// `fleet` agree.
import * as path from 'node:path';
import type { ProcessPort } from '../ports.js';
import type { Board, Task, UnreadableTask } from '../types.js';
import { catFileBatch, catFileBatchCheck, lsTree } from '../git/outsider.js';
import { parseTaskFile } from '../board/parse.js';
import { assessReadiness } from '../board/readiness.js';
import { assembleBoard, completedIds, statusesFrom, taskPrefixFrom } from '../board/read.js';
import { isParked } from '../board/parking.js';
import { canonicalTaskId, isTaskFileName } from '../board/task-id.js';
import { BUILT_IN_DIRS, customDirectory, LOCATION_PROBES, locateBoard, ROOT_CONFIG_FILE, type BoardLocation } from '../board/location.js';
import { STAGING_BRANCH, STAGING_REF } from '../staging/names.js';

export interface BoardSummary {
  /** Which refs the board was read from; empty when neither exists. */
  readonly refs: readonly string[];
  readonly ready: readonly string[];
  readonly parked: number;
  readonly unreadable: number;
  readonly total: number;
}

/** The board a drain would see, and the refs it was read from. */
export interface BoardView {
  readonly board: Board;
  readonly refs: readonly string[];
}

export interface GitObject {
  readonly oid: string;
  readonly type: 'tree' | 'blob' | 'commit';
}

/** Pure: `cat-file --batch-check` output to the object per requested name (absent when missing). */
export function parseBatchCheck(names: readonly string[], stdout: string): (GitObject | undefined)[] {
  const lines = stdout.split('\n');
  return names.map((_, index) => {
    const match = /^([0-9a-f]{40,64}) (tree|blob|commit)/.exec(lines[index] ?? '');
    return match ? { oid: match[1]!, type: match[2] as GitObject['type'] } : undefined;
  });
}

/** Pure: `ls-tree` lines to [blob oid, file name] of the markdown files. */
export function parseLsTree(stdout: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\d+ blob ([0-9a-f]{40,64})\t(.+)$/.exec(line);
    if (match && match[2]!.endsWith('.md')) entries.push([match[1]!, match[2]!]);
  }
  return entries;
}

/** Pure: `cat-file --batch` output to the contents, in request order. */
export function parseBatch(stdout: Buffer | string, count: number): string[] {
  const buffer = typeof stdout === 'string' ? Buffer.from(stdout, 'utf8') : stdout;
  const texts: string[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const newline = buffer.indexOf(0x0a, offset);
    if (newline < 0) break;
    const header = buffer.subarray(offset, newline).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (header[1] === 'missing' || !Number.isFinite(size)) {
      texts.push('');
      offset = newline + 1;
      continue;
    }
    texts.push(buffer.subarray(newline + 1, newline + 1 + size).toString('utf8'));
    offset = newline + 1 + size + 1;
  }
  return texts;
}

/**
 * Pure: the board a drain would see: the staging board, plus tasks filed on
 * the base branch that staging has not absorbed yet (the drain merges base in).
 */
export function combineBoards(staging: Board | undefined, base: Board | undefined): Board {
  if (!staging) return base ?? { tasks: [], unreadable: [], statuses: statusesFrom(undefined) };
  if (!base) return staging;
  const known = new Set([...staging.tasks.map((task) => task.id), ...(staging.completed ?? [])].map(canonicalTaskId));
  const completed = [...(staging.completed ?? []), ...(base.completed ?? []).filter((id) => !known.has(canonicalTaskId(id)))];
  return {
    tasks: [...staging.tasks, ...base.tasks.filter((task) => !known.has(canonicalTaskId(task.id)))],
    unreadable: staging.unreadable,
    statuses: staging.statuses,
    ...(completed.length ? { completed } : {}),
  };
}

function summarize(view: BoardView): BoardSummary {
  const { board, refs } = view;
  return {
    refs,
    ready: assessReadiness(board).ready.map((task) => task.id),
    parked: board.tasks.filter(isParked).length,
    unreadable: board.unreadable.length,
    total: board.tasks.length + board.unreadable.length,
  };
}

export class BoardReadError extends Error {}

/** Where the board is on one ref, with the object ids that make it. */
interface BoardAtRef {
  readonly ref: string;
  readonly location: BoardLocation;
  readonly tasks: string | undefined;
  readonly completed: string | undefined;
  readonly config: string | undefined;
}

/** Pure: the paths probed on every ref: the location probes, a root config, and the tasks/completed folders of the built-in locations. */
function probePaths(): string[] {
  return [ROOT_CONFIG_FILE, ...LOCATION_PROBES, ...BUILT_IN_DIRS.flatMap((dir) => [`${dir}/tasks`, `${dir}/completed`])];
}

/** Reads one repo's board as data, caching by tree id and by blob id. Not shared between repos. */
export class BoardSnapshot {
  private cached: { key: string; view: BoardView; summary: BoardSummary } | undefined;
  private readonly blobs = new Map<string, Task | UnreadableTask>();
  private readonly texts = new Map<string, string>();
  private readonly live = new Set<string>();

  constructor(
    private readonly process: ProcessPort,
    private readonly repoPath: string,
    private readonly baseBranch: string,
  ) {}

  /**
   * The commits of auto/work, origin/<base> and <base> as the last summary()
   * read them (the same git call): fleet compares staging with the base
   * without asking git for the refs again.
   */
  commits: { readonly staging: string | undefined; readonly originBase: string | undefined; readonly localBase: string | undefined } | undefined;

  async summary(): Promise<BoardSummary> {
    await this.view();
    return this.cached!.summary;
  }

  /** The board a drain would see: auto/work, plus tasks filed on the base that it has not absorbed. */
  async view(): Promise<BoardView> {
    const refs = [STAGING_REF, `refs/remotes/origin/${this.baseBranch}`, `refs/heads/${this.baseBranch}`];
    const paths = probePaths();
    const objects = await this.check([...refs.flatMap((ref) => paths.map((file) => `${ref}:${file}`)), ...refs.map((ref) => `${ref}^{commit}`)]);
    const found = objects.slice(0, refs.length * paths.length);
    const [staging0, origin0, local0] = objects.slice(refs.length * paths.length).map((object) => object?.oid);
    this.commits = { staging: staging0, originBase: origin0, localBase: local0 };
    const atRefs: (BoardAtRef | undefined)[] = [];
    for (const [index, ref] of refs.entries()) atRefs.push(await this.locate(ref, new Map(paths.map((file, i) => [file, found[index * paths.length + i]]))));
    const staging = atRefs[0];
    // origin/<base> when it exists (what the drain merges), else the local base.
    const base = atRefs[1] ?? atRefs[2];
    const key = [staging, base].map((at) => (at ? `${at.location.dir}:${at.tasks}:${at.completed}:${at.config}` : '-')).join('/');
    if (this.cached?.key === key) return this.cached.view;
    this.live.clear();
    const stagingBoard = staging ? await this.board(staging) : undefined;
    const sameAsStaging = staging && base && staging.tasks === base.tasks && staging.completed === base.completed && staging.config === base.config;
    const baseBoard = base && !sameAsStaging ? await this.board(base) : undefined;
    // Forget parsed blobs no longer on either board, so the cache stays the size of the board.
    for (const oid of this.blobs.keys()) if (!this.live.has(oid)) this.blobs.delete(oid);
    for (const oid of this.texts.keys()) if (!this.live.has(oid)) this.texts.delete(oid);
    const used = [stagingBoard ? STAGING_BRANCH : undefined, baseBoard ? base!.ref.replace(/^refs\/(heads|remotes)\//, '') : undefined].filter((ref): ref is string => ref !== undefined);
    const view = { board: combineBoards(stagingBoard, baseBoard), refs: used };
    this.cached = { key, view, summary: summarize(view) };
    return view;
  }

  private async check(names: readonly string[]): Promise<(GitObject | undefined)[]> {
    const result = await this.process.run(catFileBatchCheck(this.repoPath, names));
    if (result.exitCode !== 0) throw new BoardReadError(`cannot read the git objects of ${this.repoPath}: ${result.stderr.trim() || `git exited ${result.exitCode}`}`);
    return parseBatchCheck(names, result.stdout);
  }

  /** Where the board is on `ref`, decided by the CLI's rules (board/location.ts); undefined when the ref has none. */
  private async locate(ref: string, found: Map<string, GitObject | undefined>): Promise<BoardAtRef | undefined> {
    const rootConfigBlob = found.get(ROOT_CONFIG_FILE);
    const rootConfig = rootConfigBlob?.type === 'blob' ? (await this.read([rootConfigBlob.oid]))[0] : undefined;
    const custom = customDirectory(rootConfig);
    if (custom && !found.has(custom)) {
      const extra = [custom, `${custom}/tasks`, `${custom}/completed`];
      const objects = await this.check(extra.map((file) => `${ref}:${file}`));
      extra.forEach((file, i) => found.set(file, objects[i]));
    }
    const location = locateBoard({ rootConfig, isDir: (file) => found.get(file)?.type === 'tree', isFile: (file) => found.get(file)?.type === 'blob' });
    if (!location) return undefined;
    const tree = (file: string) => (found.get(file)?.type === 'tree' ? found.get(file)!.oid : undefined);
    const config = location.configFile ? found.get(location.configFile) : undefined;
    return { ref, location, tasks: tree(location.tasksDir), completed: tree(location.completedDir), config: config?.type === 'blob' ? config.oid : undefined };
  }

  /** Blob texts, cached by oid. */
  private async read(oids: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(oids.filter((oid) => !this.texts.has(oid)))];
    if (wanted.length) {
      const batch = await this.process.run(catFileBatch(this.repoPath, wanted));
      if (batch.exitCode !== 0) throw new BoardReadError(`cannot read the board's files in ${this.repoPath}: ${batch.stderr.trim()}`);
      parseBatch(batch.stdout, wanted.length).forEach((text, i) => this.texts.set(wanted[i]!, text));
    }
    for (const oid of oids) this.live.add(oid);
    return oids.map((oid) => this.texts.get(oid) ?? '');
  }

  /** The task files of one folder tree, parsed (cached by blob), with paths relative to the repo. */
  private async tasksIn(tree: string | undefined, dir: string, prefix: string): Promise<(Task | UnreadableTask)[]> {
    if (!tree) return [];
    const listing = await this.process.run(lsTree(this.repoPath, tree));
    if (listing.exitCode !== 0) throw new BoardReadError(`cannot list ${dir} in ${this.repoPath}: ${listing.stderr.trim()}`);
    const entries = parseLsTree(listing.stdout).filter(([, name]) => isTaskFileName(name, prefix));
    const unparsed = entries.filter(([oid]) => !this.blobs.has(oid)).map(([oid]) => oid);
    const texts = await this.read(unparsed);
    unparsed.forEach((oid, i) => this.blobs.set(oid, parseTaskFile('', texts[i]!)));
    // Parsed once, blob texts are not kept: only the parse is.
    for (const oid of unparsed) this.texts.delete(oid);
    for (const [oid] of entries) this.live.add(oid);
    return entries.map(([oid, name]) => ({ ...this.blobs.get(oid)!, file: path.posix.join(dir, name) }));
  }

  private async board(at: BoardAtRef): Promise<Board> {
    const configText = at.config ? (await this.read([at.config]))[0] : undefined;
    const prefix = taskPrefixFrom(configText);
    const tasks = await this.tasksIn(at.tasks, at.location.tasksDir, prefix);
    const completed = await this.tasksIn(at.completed, at.location.completedDir, prefix);
    // The same rules as a drain's own read: a duplicated id makes both files unreadable.
    return assembleBoard(tasks, configText, completedIds(completed));
  }
}
