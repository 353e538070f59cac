// The board as root sees it: read from git objects as data, never a checkout,
// never a hook, never a write into the repo. One `git cat-file --batch-check`
// per tick resolves, on the staging and base branches, where the board lives
// (backlog/, .backlog/ or the folder backlog.config.yml names: board/location)
// and the tree ids of its tasks/ and completed/ folders; when they are
// unchanged the last answer is reused, and when they change only blobs not
// seen before are read. A snapshot's first read (fleet's, the dashboard's
// first, `next`) asks `--batch-command` for the same and, in the same
// process, the config files and the tasks/ and completed/ tree objects
// (parsed here): the whole board in two git processes. Later reads keep to
// `--batch-check`, whose answer is the same few bytes however large the
// board's files are. Git runs with safe.directory=<repo> because root does
// not own the checkout. `agent-runner next` reads the same view, so it and
// `fleet` agree. The same batch reads the checkout's committed
// .agent/config.json (`HEAD`): its assistant decides which model:/effort:
// labels a task may carry to be ready, as it does for the drain.
import * as path from 'node:path';
import type { ProcessPort } from '../../ports.js';
import type { AssistantName, Board, LabelCheck, Task, UnreadableTask } from '../../types.js';
import { CONFIG_FILE as REPO_CONFIG_FILE, parseRepoConfig } from '../../repo/config.js';
import { labelCheckFor } from '../../repo/escalation.js';
import { catFileBatch, catFileBatchCheck, catFileBatchCommand, lsTree, lsTreePath } from '../../git/outsider.js';
import { PathError } from '../../errors.js';
import { parseTaskFile } from '../../board/parse.js';
import { assessReadiness } from '../../board/readiness.js';
import { assembleBoard, completedIds, statusesFrom, taskPrefixFrom } from '../../board/read.js';
import { isParked } from '../../board/parking.js';
import { canonicalTaskId, isTaskFileName } from '../../board/task-id.js';
import {
  BUILT_IN_DIRS,
  customDirectory,
  LOCATION_PROBES,
  misshapenProblem,
  placeBoard,
  ROOT_CONFIG_FILE,
  type BoardLocation,
  type PathShape,
} from '../../board/location.js';
import { STAGING_BRANCH, STAGING_REF } from '../../staging/names.js';

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

/**
 * Pure: `ls-tree` entries (`-z`: NUL-ended, names as stored; or lines) to [blob oid, file name] of the markdown files.
 */
export function parseLsTree(stdout: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const line of stdout.split(/[\0\n]/)) {
    const match = /^\d+ blob ([0-9a-f]{40,64})\t(.+)$/.exec(line);
    if (match && match[2]!.endsWith('.md')) entries.push([match[1]!, match[2]!]);
  }
  return entries;
}

export interface GitObjectContent extends GitObject {
  readonly content: Buffer;
}

/**
 * Pure: `cat-file --batch` output (bytes: a Buffer, or latin1 text) to each
 * requested name's object and content; undefined when missing. For
 * `--batch-command`, `contents[i]` says whether request i was `contents`
 * (header and content) or `info` (the header only: an empty content).
 */
export function parseBatchObjects(
  stdout: Buffer | string,
  count: number,
  contents?: readonly boolean[],
): (GitObjectContent | undefined)[] {
  const buffer = typeof stdout === 'string' ? Buffer.from(stdout, 'latin1') : stdout;
  const objects: (GitObjectContent | undefined)[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const newline = buffer.indexOf(0x0a, offset);
    const header =
      newline < 0
        ? null
        : /^([0-9a-f]{40,64}) (tree|blob|commit|tag) (\d+)$/.exec(buffer.toString('latin1', offset, newline));
    if (!header) {
      objects.push(undefined);
      if (newline >= 0) offset = newline + 1;
      continue;
    }
    const size = contents?.[i] === false ? -1 : Number(header[3]);
    const type = header[2] as GitObject['type'] | 'tag';
    objects.push(
      type === 'tag'
        ? undefined
        : { oid: header[1]!, type, content: buffer.subarray(newline + 1, newline + 1 + Math.max(0, size)) },
    );
    offset = newline + 1 + size + 1;
  }
  return objects;
}

/**
 * Pure: a tree object as git stores it (`<mode> <name>\0<raw id>` entries) to
 * [blob oid, file name] of its markdown files, as parseLsTree gives them
 * from `ls-tree` (which would quote a name with other than ASCII in it).
 */
export function parseTreeObject(content: Buffer, oidHexLength: number): [string, string][] {
  const idBytes = oidHexLength / 2;
  const entries: [string, string][] = [];
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const nul = space < 0 ? -1 : content.indexOf(0x00, space);
    if (nul < 0 || nul + 1 + idBytes > content.length) break;
    const mode = content.toString('latin1', offset, space);
    const name = content.toString('utf8', space + 1, nul);
    // 40000 is a folder and 160000 a submodule; everything else is a blob (ls-tree says blob for a link too).
    if (mode !== '40000' && mode !== '160000' && name.endsWith('.md'))
      entries.push([content.toString('hex', nul + 1, nul + 1 + idBytes), name]);
    offset = nul + 1 + idBytes;
  }
  return entries;
}

/**
 * Pure: `cat-file --batch` output to the contents as text, in request order ('' for a missing object):
 * parseBatchObjects read as UTF-8.
 */
export function parseBatch(stdout: Buffer | string, count: number): string[] {
  // This output is read as UTF-8 text (no binaryStdout): back to its bytes, whose sizes the headers give.
  const buffer = typeof stdout === 'string' ? Buffer.from(stdout, 'utf8') : stdout;
  return parseBatchObjects(buffer, count).map((object) => object?.content.toString('utf8') ?? '');
}

/**
 * Pure: the board a drain would see: the staging board, plus tasks filed on
 * the base branch that staging has not absorbed yet (the drain merges base in).
 */
export function combineBoards(staging: Board | undefined, base: Board | undefined): Board {
  if (!staging) return base ?? { tasks: [], unreadable: [], statuses: statusesFrom(undefined) };
  if (!base) return staging;
  const known = new Set([...staging.tasks.map((task) => task.id), ...(staging.completed ?? [])].map(canonicalTaskId));
  const completed = [
    ...(staging.completed ?? []),
    ...(base.completed ?? []).filter((id) => !known.has(canonicalTaskId(id))),
  ];
  return {
    tasks: [...staging.tasks, ...base.tasks.filter((task) => !known.has(canonicalTaskId(task.id)))],
    unreadable: staging.unreadable,
    statuses: staging.statuses,
    ...(completed.length ? { completed } : {}),
  };
}

/** Pure: the assistant a repo config names (the default without one); undefined when it is not a valid config. */
function assistantIn(configText: string | undefined): AssistantName | undefined {
  try {
    return parseRepoConfig(configText, REPO_CONFIG_FILE).config.assistant;
  } catch {
    return undefined;
  }
}

function summarize(view: BoardView, labels: LabelCheck): BoardSummary {
  const { board, refs } = view;
  return {
    refs,
    ready: assessReadiness(board, labels).ready.map((task) => task.id),
    parked: board.tasks.filter(isParked).length,
    unreadable: board.unreadable.length,
    total: board.tasks.length + board.unreadable.length,
  };
}

export class BoardReadError extends Error {}

/** Pure: what a tree entry is, as placeBoard judges it; a blob is taken for a file (a link is a blob too). */
function shapeInGit(object: GitObject | undefined): PathShape | undefined {
  if (!object) return undefined;
  return object.type === 'tree' ? 'folder' : object.type === 'commit' ? 'submodule' : 'file';
}

/** refs/heads/auto/work as auto/work, refs/remotes/origin/main as origin/main. */
function shortRef(ref: string): string {
  return ref.replace(/^refs\/(heads|remotes)\//, '');
}

/** Where the board is on one ref, with the object ids that make it. */
interface BoardAtRef {
  readonly ref: string;
  readonly location: BoardLocation;
  readonly tasks: string | undefined;
  readonly completed: string | undefined;
  readonly config: string | undefined;
}

/** One board's files, listed but not yet parsed. */
interface BoardFiles {
  readonly configText: string | undefined;
  /** [blob oid, path relative to the repo] */
  readonly tasks: readonly [string, string][];
  readonly completed: readonly [string, string][];
}

/**
 * Pure: of the probed paths, those whose content a first read brings along: the config files and the tasks/completed
 * folders.
 */
function contentProbes(): Set<string> {
  return new Set([
    ROOT_CONFIG_FILE,
    ...LOCATION_PROBES.filter((file) => file.includes('/')),
    ...BUILT_IN_DIRS.flatMap((dir) => [`${dir}/tasks`, `${dir}/completed`]),
  ]);
}

/**
 * Pure: the paths probed on every ref: the location probes, a root config, and the tasks/completed folders of the
 * built-in locations.
 */
function probePaths(): string[] {
  return [
    ROOT_CONFIG_FILE,
    ...LOCATION_PROBES,
    ...BUILT_IN_DIRS.flatMap((dir) => [`${dir}/tasks`, `${dir}/completed`]),
  ];
}

/** Reads one repo's board as data, caching by tree id and by blob id. Not shared between repos. */
export class BoardSnapshot {
  private cached: { key: string; view: BoardView; summary: BoardSummary } | undefined;
  private readonly blobs = new Map<string, Task | UnreadableTask>();
  private readonly texts = new Map<string, string>();
  private readonly live = new Set<string>();
  /** Whether a read was made: the first brings contents along, later ones only ids (see the top of this file). */
  private viewed = false;

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
  commits:
    | {
        readonly staging: string | undefined;
        readonly originBase: string | undefined;
        readonly localBase: string | undefined;
      }
    | undefined;

  async summary(): Promise<BoardSummary> {
    await this.view();
    return this.cached!.summary;
  }

  /** The board a drain would see: auto/work, plus tasks filed on the base that it has not absorbed. */
  async view(): Promise<BoardView> {
    const refs = [STAGING_REF, `refs/remotes/origin/${this.baseBranch}`, `refs/heads/${this.baseBranch}`];
    const paths = probePaths();
    const names = [
      ...refs.flatMap((ref) => paths.map((file) => `${ref}:${file}`)),
      ...refs.map((ref) => `${ref}^{commit}`),
      // The repo config as the checkout has it: the drain runs with it, so its assistant judges the labels.
      `HEAD:${REPO_CONFIG_FILE}`,
    ];
    const withContent = contentProbes();
    const first = !this.viewed;
    this.viewed = true;
    const requests = names.map((name, i) => ({
      name,
      contents: (i < refs.length * paths.length && withContent.has(paths[i % paths.length]!)) || i === names.length - 1,
    }));
    // git before 2.36 has no --batch-command: the first read is then read as the later ones are.
    const objects = first ? await this.fetch(requests).catch(() => this.check(names)) : await this.check(names);
    const found = objects.slice(0, refs.length * paths.length);
    const [staging0, origin0, local0] = objects
      .slice(refs.length * paths.length, refs.length * (paths.length + 1))
      .map((object) => object?.oid);
    const repoConfig = objects.at(-1)?.type === 'blob' ? objects.at(-1)!.oid : undefined;
    this.commits = { staging: staging0, originBase: origin0, localBase: local0 };
    const atRefs: (BoardAtRef | PathError | undefined)[] = [];
    for (const [index, ref] of refs.entries())
      atRefs.push(await this.locate(ref, new Map(paths.map((file, i) => [file, found[index * paths.length + i]]))));
    // origin/<base> when it has a board (what the drain merges), else the local base.
    const [staging, base] = [atRefs[0], atRefs[1] ?? atRefs[2]].map((at) => {
      if (at instanceof PathError) throw at;
      return at;
    });
    const key = [
      ...[staging, base].map((at) => (at ? `${at.location.dir}:${at.tasks}:${at.completed}:${at.config}` : '-')),
      repoConfig ?? '-',
    ].join('/');
    if (this.cached?.key === key) return this.cached.view;
    this.live.clear();
    const assistant = assistantIn(repoConfig ? (await this.read([repoConfig]))[0] : undefined);
    const sameAsStaging =
      staging &&
      base &&
      staging.tasks === base.tasks &&
      staging.completed === base.completed &&
      staging.config === base.config;
    const listed = new Map<string, [string, string][]>();
    const stagingFiles = staging ? await this.filesOf(staging, objects, listed) : undefined;
    const baseFiles = base && !sameAsStaging ? await this.filesOf(base, objects, listed) : undefined;
    await this.parseAll([stagingFiles, baseFiles].filter((files): files is BoardFiles => files !== undefined));
    const stagingBoard = stagingFiles ? this.board(stagingFiles) : undefined;
    const baseBoard = baseFiles ? this.board(baseFiles) : undefined;
    // Forget parsed blobs no longer on either board, so the cache stays the size of the board.
    for (const oid of this.blobs.keys()) if (!this.live.has(oid)) this.blobs.delete(oid);
    for (const oid of this.texts.keys()) if (!this.live.has(oid)) this.texts.delete(oid);
    const used = [stagingBoard ? STAGING_BRANCH : undefined, baseBoard ? shortRef(base!.ref) : undefined].filter(
      (ref): ref is string => ref !== undefined,
    );
    const view = { board: combineBoards(stagingBoard, baseBoard), refs: used };
    this.cached = { key, view, summary: summarize(view, labelCheckFor(assistant)) };
    return view;
  }

  /**
   * The objects, with the content of those asked for; the blobs' texts (the config files) go to the text cache, so
   * reading them later runs no git.
   */
  private async fetch(
    requests: readonly { readonly name: string; readonly contents: boolean }[],
  ): Promise<(GitObject | GitObjectContent | undefined)[]> {
    const result = await this.process.run(catFileBatchCommand(this.repoPath, requests));
    if (result.exitCode !== 0)
      throw new BoardReadError(
        `cannot read the git objects of ${this.repoPath}: ${result.stderr.trim() || `git exited ${result.exitCode}`}`,
      );
    const wanted = requests.map((request) => request.contents);
    const objects = parseBatchObjects(result.stdout, requests.length, wanted);
    objects.forEach((object, i) => {
      if (object?.type === 'blob' && wanted[i]) this.texts.set(object.oid, object.content.toString('utf8'));
    });
    return objects.map((object, i) => (object && !wanted[i] ? { oid: object.oid, type: object.type } : object));
  }

  private async check(names: readonly string[]): Promise<(GitObject | undefined)[]> {
    const result = await this.process.run(catFileBatchCheck(this.repoPath, names));
    if (result.exitCode !== 0)
      throw new BoardReadError(
        `cannot read the git objects of ${this.repoPath}: ${result.stderr.trim() || `git exited ${result.exitCode}`}`,
      );
    return parseBatchCheck(names, result.stdout);
  }

  /**
   * Where the board is on `ref`, decided by the CLI's rules (board/location.ts); undefined when the ref has none, a
   * PathError (to throw when the ref is read) when what stands there is not a folder.
   */
  private async locate(
    ref: string,
    found: Map<string, GitObject | undefined>,
  ): Promise<BoardAtRef | PathError | undefined> {
    const rootConfigBlob = found.get(ROOT_CONFIG_FILE);
    const rootConfig = rootConfigBlob?.type === 'blob' ? (await this.read([rootConfigBlob.oid]))[0] : undefined;
    const custom = customDirectory(rootConfig);
    if (custom && !found.has(custom)) {
      const extra = [custom, `${custom}/tasks`, `${custom}/completed`];
      const objects = await this.check(extra.map((file) => `${ref}:${file}`));
      extra.forEach((file, i) => found.set(file, objects[i]));
    }
    const place = placeBoard({ rootConfig, shapeOf: (file) => shapeInGit(found.get(file)) });
    if (place.kind === 'none') return undefined;
    if (place.kind === 'misshapen') {
      // A blob is a file or a link: only its mode in the tree tells, asked only on this (rare) path.
      const shape = place.shape === 'file' ? await this.blobShape(ref, place.path) : place.shape;
      const { problem, fix } = misshapenProblem({ ...place, shape }, true);
      return new PathError(`${shortRef(ref)}:${place.path} in ${this.repoPath}`, problem, fix);
    }
    const { location } = place;
    const tree = (file: string) => (found.get(file)?.type === 'tree' ? found.get(file)!.oid : undefined);
    const config = location.configFile ? found.get(location.configFile) : undefined;
    return {
      ref,
      location,
      tasks: tree(location.tasksDir),
      completed: tree(location.completedDir),
      config: config?.type === 'blob' ? config.oid : undefined,
    };
  }

  /** 'link' or 'file': the mode of the blob at `file` on `ref`. */
  private async blobShape(ref: string, file: string): Promise<PathShape> {
    const listing = await this.process.run(lsTreePath(this.repoPath, ref, file));
    return listing.exitCode === 0 && listing.stdout.startsWith('120000 ') ? 'link' : 'file';
  }

  /** Blob texts, cached by oid. */
  private async read(oids: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(oids.filter((oid) => !this.texts.has(oid)))];
    if (wanted.length) {
      const batch = await this.process.run(catFileBatch(this.repoPath, wanted));
      if (batch.exitCode !== 0)
        throw new BoardReadError(`cannot read the board's files in ${this.repoPath}: ${batch.stderr.trim()}`);
      parseBatch(batch.stdout, wanted.length).forEach((text, i) => this.texts.set(wanted[i]!, text));
    }
    for (const oid of oids) this.live.add(oid);
    return oids.map((oid) => this.texts.get(oid) ?? '');
  }

  /**
   * The markdown files of a folder: from its tree object when the first read brought it, else `ls-tree` (once a read
   * per tree).
   */
  private async listing(
    tree: string,
    dir: string,
    fetched: readonly (GitObject | undefined)[],
    listed: Map<string, [string, string][]>,
  ): Promise<[string, string][]> {
    const known = listed.get(tree);
    if (known) return known;
    const object = fetched.find(
      (candidate): candidate is GitObjectContent =>
        candidate?.type === 'tree' && candidate.oid === tree && 'content' in candidate,
    );
    let entries: [string, string][];
    if (object) {
      entries = parseTreeObject(object.content, tree.length);
    } else {
      const listing = await this.process.run(lsTree(this.repoPath, tree));
      if (listing.exitCode !== 0)
        throw new BoardReadError(`cannot list ${dir} in ${this.repoPath}: ${listing.stderr.trim()}`);
      entries = parseLsTree(listing.stdout);
    }
    listed.set(tree, entries);
    return entries;
  }

  /** The task files of one board: its config's text, and [blob oid, path] of the files in tasks/ and completed/. */
  private async filesOf(
    at: BoardAtRef,
    fetched: readonly (GitObject | undefined)[],
    listed: Map<string, [string, string][]>,
  ): Promise<BoardFiles> {
    const configText = at.config ? (await this.read([at.config]))[0] : undefined;
    const prefix = taskPrefixFrom(configText);
    const files = async (tree: string | undefined, dir: string): Promise<[string, string][]> =>
      tree
        ? (await this.listing(tree, dir, fetched, listed))
            .filter(([, name]) => isTaskFileName(name, prefix))
            .map(([oid, name]) => [oid, path.posix.join(dir, name)])
        : [];
    return {
      configText,
      tasks: await files(at.tasks, at.location.tasksDir),
      completed: await files(at.completed, at.location.completedDir),
    };
  }

  /** Parses (cached by blob) every task file not parsed yet, of all the boards at once: one git process. */
  private async parseAll(boards: readonly BoardFiles[]): Promise<void> {
    const unparsed = [
      ...new Set(
        boards
          .flatMap((board) => [...board.tasks, ...board.completed])
          .map(([oid]) => oid)
          .filter((oid) => !this.blobs.has(oid)),
      ),
    ];
    const texts = await this.read(unparsed);
    unparsed.forEach((oid, i) => this.blobs.set(oid, parseTaskFile('', texts[i]!)));
    // Parsed once, blob texts are not kept: only the parse is.
    for (const oid of unparsed) this.texts.delete(oid);
  }

  private board(files: BoardFiles): Board {
    const parsed = (entries: readonly [string, string][]) =>
      entries.map(([oid, file]) => (this.live.add(oid), { ...this.blobs.get(oid)!, file }));
    // The same rules as a drain's own read: a duplicated id makes both files unreadable.
    return assembleBoard(parsed(files.tasks), files.configText, completedIds(parsed(files.completed)));
  }
}
